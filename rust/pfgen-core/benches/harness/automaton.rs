//! Prototype (issue 56): Fluency and Truthfulness from a walk over a suffix automaton of a
//! question's reference answers instead of the n-gram hash tables, for comparing the two walks
//! in the harness. Not used by the scorer.
//!
//! The automaton is the generalised suffix automaton of the reference answers of up to
//! MAX_SOURCES sources, cut to the states that hold a string of at most MAX_N characters. A
//! state's strings (lengths linklen+1..=len, each a suffix of the longer ones) end at the same
//! positions, so they are in the same reference answers: one document frequency per state and
//! source. A walk keeps the state of the longest n-gram (at most MAX_N) ending at the current
//! character: one transition per character, a suffix link per failed transition (amortised at
//! most one per character), no miss probes for the lengths between. The n-grams ending at a
//! character that the answer has not had yet (lengths counted_before+1..=L) add
//! F(L) - F(counted_before), where F(x) is the sum of the frequencies of the suffixes of
//! lengths 1..=x; within a state F grows by its frequency per length, so the common case reads
//! nothing beyond the state's record. The record also holds the frequency of the state's
//! suffix of length 3 (Truthfulness).
//!
//! The walk runs one character behind its transitions: the transition of character i finds
//! the next state, prefetches its record and the next transition's slot, and the record is
//! read at character i + 1, when it is in the caches.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pfgen_core::common::page_buffer::PageBuffer;
use pfgen_core::pfgen::ngram_table::{unpack, LANE_BITS, LANE_MASK, MAX_SOURCES};
use pfgen_core::pfgen::reference::{length_discount, mark, truth_ratios, truthfulness_of, Repeats};
use pfgen_core::pfgen::spec::{FLAT, FLUENCY_USEFUL, MAX_N, TRUTH_CUT};

const CODE_POINT_BITS: u32 = 21;
const HASH_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
const EMPTY: u64 = u64::MAX;
const CLUSTER_END_ROOM: usize = 64;
const ROOT: u32 = 0;

/// A multiplicative hasher for the build's maps of integer keys.
#[derive(Default)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        // The product's high bits are the well-mixed ones; the map indexes by the low bits.
        self.0.rotate_left(32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(HASH_MULTIPLIER);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0 ^ value).wrapping_mul(HASH_MULTIPLIER);
    }
}

type IntMap = HashMap<u64, u32, BuildHasherDefault<IntHasher>>;

#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    target: u64,
}

/// A state of the cut automaton: its frequencies (lanes of LANE_BITS per source), F at its
/// suffix link's length (`base`), the frequencies of its suffix of length 3 (`frequency3`, if
/// its strings are that long), its suffix link and that state's length.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub struct State {
    frequencies: u64,
    base: u64,
    frequency3: u64,
    link: u32,
    link_length: u32,
}

pub struct Automaton {
    slots: PageBuffer<Slot>,
    home_slots: usize,
    states: PageBuffer<State>,
    pub num_sources: usize,
    pub num_transitions: usize,
}

/// The generalised suffix automaton under construction: transitions in a map keyed by
/// (state, character), and each state's transitions in a list (for cloning).
struct Builder {
    lengths: Vec<u32>,
    links: Vec<u32>,
    /// First edge of each state's list (u32::MAX: none).
    heads: Vec<u32>,
    /// Edges: (character, target, next edge of the same state).
    edges: Vec<(u32, u32, u32)>,
    /// (state << 21 | character) -> edge.
    map: IntMap,
}

const NONE: u32 = u32::MAX;

impl Builder {
    fn new(capacity: usize) -> Self {
        let mut map = IntMap::default();
        map.reserve(capacity * 3 / 2);
        Builder {
            lengths: vec![0],
            links: vec![NONE],
            heads: vec![NONE],
            edges: Vec::with_capacity(capacity * 3 / 2),
            map,
        }
    }

    fn key(state: u32, c: u32) -> u64 {
        u64::from(state) << CODE_POINT_BITS | u64::from(c)
    }

    fn edge(&self, state: u32, c: u32) -> Option<u32> {
        self.map.get(&Self::key(state, c)).copied()
    }

    fn add_edge(&mut self, state: u32, c: u32, target: u32) {
        let index = self.edges.len() as u32;
        self.edges.push((c, target, self.heads[state as usize]));
        self.heads[state as usize] = index;
        self.map.insert(Self::key(state, c), index);
    }

    fn new_state(&mut self, length: u32, link: u32) -> u32 {
        self.lengths.push(length);
        self.links.push(link);
        self.heads.push(NONE);
        self.lengths.len() as u32 - 1
    }

    /// A copy of `q` (its transitions and link) of length `length`; the states from `p` up
    /// its suffix links that go to `q` on `c` go to the copy instead.
    fn split(&mut self, p: u32, c: u32, q: u32, length: u32) -> u32 {
        let clone = self.new_state(length, self.links[q as usize]);
        let mut edge = self.heads[q as usize];
        while edge != NONE {
            let (ch, target, next) = self.edges[edge as usize];
            self.add_edge(clone, ch, target);
            edge = next;
        }
        let mut p = p;
        while p != NONE {
            match self.edge(p, c) {
                Some(edge) if self.edges[edge as usize].1 == q => {
                    self.edges[edge as usize].1 = clone;
                    p = self.links[p as usize];
                }
                _ => break,
            }
        }
        self.links[q as usize] = clone;
        clone
    }

    /// Extends the state `last` (of the prefix read so far) by `c`; returns the new prefix's
    /// state.
    fn extend(&mut self, last: u32, c: u32) -> u32 {
        let length = self.lengths[last as usize] + 1;
        if let Some(edge) = self.edge(last, c) {
            let q = self.edges[edge as usize].1;
            if self.lengths[q as usize] == length {
                return q;
            }
            return self.split(last, c, q, length);
        }
        let current = self.new_state(length, ROOT);
        let mut p = last;
        while p != NONE && self.edge(p, c).is_none() {
            self.add_edge(p, c, current);
            p = self.links[p as usize];
        }
        if p != NONE {
            let Some(edge) = self.edge(p, c) else {
                unreachable!("the loop stopped at a state with the edge")
            };
            let q = self.edges[edge as usize].1;
            let link = if self.lengths[p as usize] + 1 == self.lengths[q as usize] {
                q
            } else {
                self.split(p, c, q, self.lengths[p as usize] + 1)
            };
            self.links[current as usize] = link;
        }
        current
    }
}

impl Automaton {
    /// The automaton of the sources' answers (1 to MAX_SOURCES sources).
    pub fn build(sources: &[&[String]]) -> Automaton {
        let characters: usize = sources
            .iter()
            .flat_map(|answers| answers.iter())
            .map(|answer| answer.len())
            .sum();
        let mut builder = Builder::new(characters);
        // The state of every prefix of every answer, answer after answer.
        let mut prefix_states: Vec<u32> = Vec::with_capacity(characters);
        let mut answer_ends: Vec<(usize, usize)> = Vec::new();
        for (source, answers) in sources.iter().enumerate() {
            for answer in answers.iter() {
                let mut last = ROOT;
                for c in answer.chars() {
                    last = builder.extend(last, c as u32);
                    prefix_states.push(last);
                }
                answer_ends.push((prefix_states.len(), source));
            }
        }
        let num_states = builder.lengths.len();
        let links = &builder.links;
        let lengths = &builder.lengths;
        // Document frequencies: each answer marks the states on the suffix paths of its
        // prefixes once.
        let mut frequencies = vec![0u64; num_states];
        let mut marked = vec![u32::MAX; num_states];
        let mut start = 0;
        for (document, &(end, source)) in answer_ends.iter().enumerate() {
            for &prefix in &prefix_states[start..end] {
                let mut state = prefix;
                while state != ROOT && marked[state as usize] != document as u32 {
                    marked[state as usize] = document as u32;
                    frequencies[state as usize] += 1 << (LANE_BITS * source as u32);
                    state = links[state as usize];
                }
            }
            start = end;
        }
        let link_length = |state: usize| -> u32 {
            match links[state] {
                NONE => 0,
                link => lengths[link as usize],
            }
        };
        // Kept: the root and the states holding a string of at most MAX_N characters, numbered
        // by falling number of answers (the root first), shorter first among equals.
        let mut kept: Vec<u32> = (0..num_states as u32)
            .filter(|&s| s == ROOT || link_length(s as usize) < MAX_N as u32)
            .collect();
        let answers_of = |s: u32| -> u64 {
            let f = frequencies[s as usize];
            (0..MAX_SOURCES as u32)
                .map(|lane| (f >> (LANE_BITS * lane)) & LANE_MASK)
                .sum()
        };
        kept.sort_by_key(|&s| {
            (
                s != ROOT,
                std::cmp::Reverse(answers_of(s)),
                link_length(s as usize),
            )
        });
        let mut number = vec![u32::MAX; num_states];
        for (index, &s) in kept.iter().enumerate() {
            number[s as usize] = index as u32;
        }
        // A target whose strings are all longer than MAX_N: its first kept suffix state (the
        // walk keeps at most MAX_N characters).
        let cut = |mut s: u32| -> u32 {
            while number[s as usize] == u32::MAX {
                s = links[s as usize];
            }
            number[s as usize]
        };
        let mut states = PageBuffer::filled(State::default(), kept.len(), kept.len());
        // Parents before children: a state's link is shorter, so by length.
        let mut by_length = kept.clone();
        by_length.sort_by_key(|&s| lengths[s as usize]);
        for &s in &by_length {
            let index = number[s as usize] as usize;
            if s == ROOT {
                continue;
            }
            let link = number[links[s as usize] as usize];
            let parent = states[link as usize];
            let parent_length = link_length(links[s as usize] as usize);
            let own_link_length = link_length(s as usize);
            let base = parent.base
                + u64::from(own_link_length - parent_length)
                    * parent.frequencies
                    * u64::from(links[s as usize] != ROOT);
            let frequency3 = if own_link_length < 3 {
                frequencies[s as usize]
            } else {
                parent.frequency3
            };
            states[index] = State {
                frequencies: frequencies[s as usize],
                base,
                frequency3,
                link,
                link_length: own_link_length,
            };
        }
        // Transitions of the kept states, placed by their source state's number (the most
        // frequent first), at a load factor of about 0.5.
        let mut transitions: Vec<(u64, u32)> = Vec::new();
        for &s in &kept {
            let mut edge = builder.heads[s as usize];
            while edge != NONE {
                let (c, target, next) = builder.edges[edge as usize];
                transitions.push((Builder::key(number[s as usize], c), cut(target)));
                edge = next;
            }
        }
        transitions.sort_by_key(|&(key, _)| key >> CODE_POINT_BITS);
        let home_slots = (transitions.len() * 2).max(16);
        let empty = Slot {
            key: EMPTY,
            target: 0,
        };
        let mut slots =
            PageBuffer::filled(empty, home_slots + 1, home_slots + 1 + CLUSTER_END_ROOM);
        for &(key, target) in &transitions {
            let link = states[target as usize].link;
            let mut slot = home_slot(key, home_slots);
            while slots[slot].key != EMPTY {
                slot += 1;
                if slot + 1 >= slots.len() {
                    slots.push(empty);
                }
            }
            slots[slot] = Slot {
                key,
                target: u64::from(target) | u64::from(link) << 32,
            };
        }
        Automaton {
            slots,
            home_slots,
            states,
            num_sources: sources.len(),
            num_transitions: transitions.len(),
        }
    }

    pub fn num_states(&self) -> usize {
        self.states.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
            + self.states.len() * std::mem::size_of::<State>()
    }

    /// Where the probe of `state`'s transition on `c` starts; its table line is prefetched.
    #[inline]
    fn prefetch_transition(&self, state: u32, c: char) -> usize {
        let home = home_slot(Builder::key(state, c as u32), self.home_slots);
        if let Some(slot) = self.slots.get(home) {
            prefetch(slot);
        }
        home
    }

    /// The target of `state`'s transition on `c` and the target's suffix link.
    #[inline]
    fn transition_from(&self, state: u32, c: char, home: usize) -> Option<(u32, u32)> {
        let key = Builder::key(state, c as u32);
        let mut slot = home;
        loop {
            let stored = self.slots[slot];
            if stored.key == key {
                return Some((stored.target as u32, (stored.target >> 32) as u32));
            }
            if stored.key == EMPTY {
                return None;
            }
            slot += 1;
        }
    }

    #[inline]
    fn transition(&self, state: u32, c: char) -> Option<u32> {
        let home = home_slot(Builder::key(state, c as u32), self.home_slots);
        Some(self.transition_from(state, c, home)?.0)
    }

    /// The frequencies of a whole n-gram (1..=MAX_N characters), if present.
    fn find(&self, gram: &[char]) -> Option<u64> {
        let mut state = ROOT;
        for &c in gram {
            state = self.transition(state, c)?;
        }
        Some(self.states[state as usize].frequencies)
    }

    /// Sum of the frequencies of the suffixes of lengths 1..=length of a string of `state`
    /// (length <= the state's longest).
    #[inline]
    fn prefix_sum(&self, mut state: State, length: u32) -> u64 {
        while length < state.link_length {
            state = self.states[state.link as usize];
        }
        state.base + u64::from(length - state.link_length) * state.frequencies
    }
}

#[inline]
fn home_slot(key: u64, home_slots: usize) -> usize {
    let spread = key.wrapping_mul(HASH_MULTIPLIER) >> 32;
    ((spread * home_slots as u64) >> 32) as usize
}

#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing the program sees, and the address is a reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Per source, the reference tables of a question as automata (up to MAX_SOURCES sources
/// each), with the baselines and Truthfulness ratios.
pub struct References {
    pub automata: Vec<Automaton>,
    pub baselines: Vec<f64>,
    truth_ratios: Vec<Vec<f64>>,
}

pub const GROUP: usize = 16;

impl References {
    pub fn build(sources: &[&[String]]) -> References {
        let mut automata = Vec::new();
        let mut baselines = Vec::new();
        let mut walk = Walk::new();
        for group in sources.chunks(MAX_SOURCES) {
            let automaton = Automaton::build(group);
            // The baseline: each answer's fluency with baseline 1, from the walk itself.
            let ones = [1.0; MAX_SOURCES];
            for (source, answers) in group.iter().enumerate() {
                let mut sum = 0.0;
                for answer in answers.iter() {
                    let chars: Vec<char> = answer.chars().take(FLUENCY_USEFUL).collect();
                    walk.reset(&automaton, &chars);
                    for (index, &c) in chars.iter().enumerate() {
                        let next = chars.get(index + 1).copied().unwrap_or(c);
                        walk.advance::<false>(&automaton, index, c, next, &ones);
                    }
                    walk.account_last(&automaton, chars.len(), &ones);
                    sum += walk.best[source];
                }
                baselines.push(sum / answers.len() as f64);
            }
            automata.push(automaton);
        }
        References {
            automata,
            baselines,
            truth_ratios: sources.iter().map(|s| truth_ratios(s.len())).collect(),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.automata.iter().map(Automaton::memory_bytes).sum()
    }

    /// As `ReferenceTables::score_answers`.
    /// `PREFETCH_LINK`: also prefetch the next transition of each state's suffix link (taken
    /// when the state's own fails).
    pub fn score_answers<const PREFETCH_LINK: bool, S: AsRef<[char]>>(
        &self,
        answers: &[S],
        walks: &mut Vec<Walk>,
        fluency: &mut [f64],
        truthfulness: &mut [f64],
    ) {
        let k = self.baselines.len();
        let mut cut: [&[char]; GROUP] = [&[]; GROUP];
        for (kept, answer) in cut.iter_mut().zip(answers) {
            let chars = answer.as_ref();
            *kept = &chars[..chars.len().min(TRUTH_CUT - 1)];
        }
        let answers = &cut[..answers.len().min(GROUP)];
        let longest = answers.iter().map(|chars| chars.len()).max().unwrap_or(0);
        while walks.len() < answers.len() {
            walks.push(Walk::new());
        }
        for (group, automaton) in self.automata.iter().enumerate() {
            let first = group * MAX_SOURCES;
            let sources = first..first + automaton.num_sources;
            let baselines = &self.baselines[sources.clone()];
            for (walk, chars) in walks.iter_mut().zip(answers) {
                walk.reset(automaton, chars);
            }
            for index in 0..=longest {
                for (walk, chars) in walks.iter_mut().zip(answers) {
                    if let Some(&c) = chars.get(index) {
                        let next = chars.get(index + 1).copied().unwrap_or(c);
                        walk.advance::<PREFETCH_LINK>(automaton, index, c, next, baselines);
                    } else if index == chars.len() {
                        walk.account_last(automaton, index, baselines);
                    }
                }
            }
            for (row, (walk, chars)) in walks.iter_mut().zip(answers).enumerate() {
                let row = row * k;
                walk.finish(
                    automaton,
                    chars,
                    &self.truth_ratios[sources.clone()],
                    &mut fluency[row + sources.start..row + sources.end],
                    &mut truthfulness[row + sources.start..row + sources.end],
                );
            }
        }
    }
}

/// The walk of one answer against one automaton.
pub struct Walk {
    repeats: Repeats,
    max_frequency: Vec<[u16; MAX_SOURCES]>,
    kept: Vec<usize>,
    /// The state and length of the longest n-gram ending at the last character read.
    state: u32,
    length: u32,
    /// Where the probe of the next transition starts.
    home: usize,
    fluency_length: usize,
    totals: [u64; MAX_SOURCES],
    best: [f64; MAX_SOURCES],
    /// Counters: suffix links followed for prefix sums and failed transitions.
    pub chain_steps: u64,
    pub failed_transitions: u64,
}

impl Walk {
    pub fn new() -> Self {
        Walk {
            repeats: Repeats::new(),
            max_frequency: Vec::with_capacity(TRUTH_CUT),
            kept: Vec::with_capacity(TRUTH_CUT),
            state: ROOT,
            length: 0,
            home: 0,
            fluency_length: 0,
            totals: [0; MAX_SOURCES],
            best: [0.0; MAX_SOURCES],
            chain_steps: 0,
            failed_transitions: 0,
        }
    }

    fn reset(&mut self, automaton: &Automaton, chars: &[char]) {
        let answer_length = chars.len();
        if let Some(&first) = chars.first() {
            self.home = automaton.prefetch_transition(ROOT, first);
        }
        self.repeats
            .compute(&chars[..answer_length.min(FLUENCY_USEFUL)]);
        self.max_frequency.clear();
        self.max_frequency
            .resize((answer_length + 2).min(TRUTH_CUT), [0; MAX_SOURCES]);
        self.state = ROOT;
        self.length = 0;
        self.fluency_length = answer_length.min(FLUENCY_USEFUL);
        self.totals = [0; MAX_SOURCES];
        self.best = [0.0; MAX_SOURCES];
    }

    /// Counts the n-grams ending at character `index` (the state found at its transition).
    #[inline]
    fn account(&mut self, automaton: &Automaton, index: usize, baselines: &[f64]) {
        let state = automaton.states[self.state as usize];
        let length = self.length;
        if length >= 3 {
            mark(
                &mut self.max_frequency,
                index - 1,
                &unpack(state.frequency3),
            );
        }
        if index < FLUENCY_USEFUL {
            let counted_before = u32::from(self.repeats.lengths()[index]);
            let added = if length <= counted_before {
                0
            } else if counted_before >= state.link_length {
                u64::from(length - counted_before) * state.frequencies
            } else {
                self.chain_steps += 1;
                state.base + u64::from(length - state.link_length) * state.frequencies
                    - automaton.prefix_sum(state, counted_before)
            };
            for (lane, total) in self.totals.iter_mut().enumerate() {
                *total += (added >> (LANE_BITS * lane as u32)) & LANE_MASK;
            }
            let l = index + 1;
            if l >= FLAT || l == self.fluency_length {
                let discount = length_discount(l);
                for (s, &baseline) in baselines.iter().enumerate() {
                    let value = self.totals[s] as f64 * discount / baseline;
                    if value > self.best[s] {
                        self.best[s] = value;
                    }
                }
            }
        }
    }

    /// Counts the previous character's n-grams, then makes the transition on `c` (at `index`)
    /// and prefetches what the next step reads.
    #[inline]
    fn advance<const PREFETCH_LINK: bool>(
        &mut self,
        automaton: &Automaton,
        index: usize,
        c: char,
        next: char,
        baselines: &[f64],
    ) {
        if index > 0 {
            self.account(automaton, index - 1, baselines);
        }
        let mut state = self.state;
        let mut length = self.length;
        let mut home = self.home;
        let found = loop {
            if let Some((target, link)) = automaton.transition_from(state, c, home) {
                length = (length + 1).min(MAX_N as u32);
                if PREFETCH_LINK {
                    automaton.prefetch_transition(link, next);
                }
                break target;
            }
            if state == ROOT {
                length = 0;
                break ROOT;
            }
            self.failed_transitions += 1;
            let record = automaton.states[state as usize];
            state = record.link;
            length = record.link_length;
            home = home_slot(Builder::key(state, c as u32), automaton.home_slots);
        };
        self.state = found;
        self.length = length;
        prefetch(&automaton.states[found as usize]);
        self.home = automaton.prefetch_transition(found, next);
    }

    /// Counts the last character's n-grams (`length` characters, at least 1).
    #[inline]
    fn account_last(&mut self, automaton: &Automaton, length: usize, baselines: &[f64]) {
        if length > 0 {
            self.account(automaton, length - 1, baselines);
        }
    }

    fn finish(
        &mut self,
        automaton: &Automaton,
        chars: &[char],
        ratios: &[Vec<f64>],
        fluency: &mut [f64],
        truthfulness: &mut [f64],
    ) {
        fluency.copy_from_slice(&self.best[..ratios.len()]);
        truthfulness_of(
            &mut self.max_frequency,
            &mut self.kept,
            chars,
            ratios,
            |gram| automaton.find(gram).map(unpack),
            || automaton.transition(ROOT, '$').is_some(),
            truthfulness,
        );
    }
}
