//! The reference side of one question: n-gram tables of every source and their baselines,
//! and the Fluency and Truthfulness of answers against them (scoring-spec.md §2-§4).

use crate::pfgen::ngram_build::{build_table, WalkAdditions};
use crate::pfgen::ngram_table::{
    NgramTable, Node, TableError, LANE_BITS, LANE_MASK, MAX_SOURCES, ROOT,
};
use crate::pfgen::spec::{FLAT, FLUENCY_USEFUL, MAX_N, TRUTH_CUT};
/// Characters that carry no truthfulness (ASCII ^ and $ included, wherever they occur):
/// ^ $ 、 。 ・ 「 」 『 』 （ ） 【 】 ［ ］ 〈 〉 《 》. Without branches (whether a character is
/// punctuation is unpredictable): 、。 are U+3001-U+3002 and 〈〉《》「」『』【】 U+3008-U+3011, bits
/// of a mask.
#[inline]
fn is_excluded(c: char) -> bool {
    const CJK_FIRST: u32 = 0x3000;
    const CJK_MASK: u32 = 0b11_1111_1111_0000_0110;
    let c = c as u32;
    let offset = c.wrapping_sub(CJK_FIRST);
    let in_mask = (offset < 32) & ((CJK_MASK >> (offset & 31)) & 1 != 0);
    in_mask
        | (c == '^' as u32)
        | (c == '$' as u32)
        | (c == '・' as u32)
        | (c == '（' as u32)
        | (c == '）' as u32)
        | (c == '［' as u32)
        | (c == '］' as u32)
}

/// A source of reference answers: its key (`P`, `S`, ...) and its answers in file order.
pub struct Source<'a> {
    pub key: &'a str,
    pub answers: &'a [String],
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReferenceError {
    Table(TableError),
    NoSources,
    EmptySource(String),
    ZeroBaseline(String),
}

impl std::fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReferenceError::Table(error) => write!(f, "{error}"),
            ReferenceError::NoSources => write!(f, "no reference sources"),
            ReferenceError::EmptySource(key) => write!(f, "source {key} has no reference answers"),
            ReferenceError::ZeroBaseline(key) => write!(
                f,
                "source {key}: the reference answers' mean fluency (the baseline) is 0"
            ),
        }
    }
}

impl std::error::Error for ReferenceError {}

impl From<TableError> for ReferenceError {
    fn from(error: TableError) -> Self {
        ReferenceError::Table(error)
    }
}

/// Tables of up to MAX_SOURCES sources each; source `s` is in `tables[s / MAX_SOURCES]`.
pub struct ReferenceTables {
    tables: Vec<NgramTable>,
    baselines: Vec<f64>,
    /// Per source: `min(1, m / N * 200)` for every document frequency m = 0..=N, the
    /// Truthfulness of a character whose best covering 3-gram is in m of the N answers.
    truth_ratios: Vec<Vec<f64>>,
}

/// How many answers `score_answers` walks side by side, at most.
pub const GROUP: usize = 16;

/// Scratch space of one scoring thread, reused across answers: a walk per answer walked side
/// by side, made when first needed (a call with one answer makes one).
#[derive(Default)]
pub struct Scratch {
    walks: Vec<Walk>,
}

impl ReferenceTables {
    /// Builds the tables and baselines (scoring-spec.md §2) of the given sources, in order.
    pub fn build(sources: &[Source]) -> Result<Self, ReferenceError> {
        if sources.is_empty() {
            return Err(ReferenceError::NoSources);
        }
        let mut tables = Vec::new();
        let mut baselines = Vec::new();
        for group in sources.chunks(MAX_SOURCES) {
            let mut documents = Vec::with_capacity(group.len());
            for source in group {
                if source.answers.is_empty() {
                    return Err(ReferenceError::EmptySource(source.key.to_string()));
                }
                documents.push(source.answers);
            }
            let (table, additions) = build_table(&documents, FLUENCY_USEFUL)?;
            for (source, walk_additions) in group.iter().zip(&additions.by_source) {
                let baseline = baseline(walk_additions, &additions);
                if baseline == 0.0 {
                    return Err(ReferenceError::ZeroBaseline(source.key.to_string()));
                }
                baselines.push(baseline);
            }
            tables.push(table);
        }
        Ok(ReferenceTables {
            tables,
            baselines,
            truth_ratios: sources
                .iter()
                .map(|s| truth_ratios(s.answers.len()))
                .collect(),
        })
    }

    pub fn num_sources(&self) -> usize {
        self.baselines.len()
    }

    /// The tables, baselines and reference answers per source, for `table_file`.
    pub(crate) fn parts(&self) -> (&[NgramTable], &[f64], Vec<usize>) {
        let num_answers = self.truth_ratios.iter().map(|r| r.len() - 1).collect();
        (&self.tables, &self.baselines, num_answers)
    }

    /// Tables from `parts`, if they fit together.
    pub(crate) fn from_parts(
        tables: Vec<NgramTable>,
        baselines: Vec<f64>,
        num_answers: Vec<usize>,
    ) -> Option<Self> {
        let table_sources: usize = tables.iter().map(NgramTable::num_sources).sum();
        let consistent = !tables.is_empty()
            && table_sources == baselines.len()
            && num_answers.len() == baselines.len()
            && num_answers
                .iter()
                .all(|&n| (1..=u16::MAX as usize).contains(&n))
            && tables
                .iter()
                .enumerate()
                .all(|(i, table)| i + 1 == tables.len() || table.num_sources() == MAX_SOURCES);
        consistent.then(|| ReferenceTables {
            tables,
            baselines,
            truth_ratios: num_answers.into_iter().map(truth_ratios).collect(),
        })
    }

    pub fn baselines(&self) -> &[f64] {
        &self.baselines
    }

    pub fn num_nodes(&self) -> usize {
        self.tables.iter().map(NgramTable::num_nodes).sum()
    }

    pub fn memory_bytes(&self) -> usize {
        self.tables.iter().map(NgramTable::memory_bytes).sum()
    }

    /// Fluency (scoring-spec.md §3) and Truthfulness (scoring-spec.md §4) of up to GROUP answers
    /// (their characters) against every source: one value per source in `fluency` and in
    /// `truthfulness`, a row of `num_sources` per answer.
    ///
    /// A walk's reads of the table depend on what it found at the previous character: as it
    /// finds the n-grams ending at one character, it prefetches the table lines of the next
    /// character's probes. The answers are walked side by side, a character of each in turn,
    /// so that a prefetch has the other walks' steps to arrive in: a table that is not in the
    /// caches (another question's was used just before) is read from memory by several walks
    /// at once (docs/performance.md).
    pub fn score_answers<S: AsRef<[char]>>(
        &self,
        answers: &[S],
        scratch: &mut Scratch,
        fluency: &mut [f64],
        truthfulness: &mut [f64],
    ) {
        debug_assert!(answers.len() <= GROUP);
        let k = self.num_sources();
        let mut cut: [&[char]; GROUP] = [&[]; GROUP];
        for (kept, answer) in cut.iter_mut().zip(answers) {
            let chars = answer.as_ref();
            *kept = &chars[..chars.len().min(TRUTH_CUT - 1)];
        }
        let answers = &cut[..answers.len().min(GROUP)];
        let longest = answers.iter().map(|chars| chars.len()).max().unwrap_or(0);
        let walks = &mut scratch.walks;
        while walks.len() < answers.len() {
            walks.push(Walk::new());
        }
        for (group, table) in self.tables.iter().enumerate() {
            let first = group * MAX_SOURCES;
            let sources = first..first + table.num_sources();
            let baselines = &self.baselines[sources.clone()];
            for (walk, chars) in walks.iter_mut().zip(answers) {
                walk.reset(table, chars);
            }
            for index in 0..longest {
                for (walk, chars) in walks.iter_mut().zip(answers) {
                    if let Some(&c) = chars.get(index) {
                        // After the last character, prefetching for `c` again is harmless.
                        let next = chars.get(index + 1).copied().unwrap_or(c);
                        walk.advance(table, index, c, next, baselines);
                    }
                }
            }
            for (row, (walk, chars)) in walks.iter_mut().zip(answers).enumerate() {
                let row = row * k;
                walk.finish(
                    table,
                    chars,
                    &self.truth_ratios[sources.clone()],
                    &mut fluency[row + sources.start..row + sources.end],
                    &mut truthfulness[row + sources.start..row + sources.end],
                );
            }
        }
    }
}

/// The baseline of a source (scoring-spec.md §2): the mean, in file order, of its answers' fluency
/// with baseline 1.0, from what each answer's walk adds (up to FLAT in one sum, then per length).
fn baseline(walk_additions: &[u64], additions: &WalkAdditions) -> f64 {
    let mut sum = 0.0;
    let documents = walk_additions.chunks(additions.row_length());
    let num_documents = documents.len();
    for document_added in documents {
        // Undiscounted up to FLAT, the value only grows: its best there is its total.
        let mut total = document_added[0];
        let mut best = total as f64;
        for (offset, &added) in document_added.iter().enumerate().skip(1) {
            total += added;
            let value = total as f64 * length_discount(FLAT + offset);
            if value > best {
                best = value;
            }
        }
        sum += best;
    }
    sum / num_documents as f64
}

/// Per document frequency m = 0..=num_answers, `min(1, m / num_answers * 200)`.
pub fn truth_ratios(num_answers: usize) -> Vec<f64> {
    let n = num_answers as f64;
    (0..=num_answers)
        .map(|m| (m as f64 / n * 200.0).min(1.0))
        .collect()
}

/// `1 - max(l - 100, 0) / 50`, the discount of a prefix of length l (a table: a division per
/// character would cost more than the lookups of the n-grams).
#[inline]
pub fn length_discount(l: usize) -> f64 {
    DISCOUNTS[l]
}

static DISCOUNTS: [f64; TRUTH_CUT + 1] = discounts();

const fn discounts() -> [f64; TRUTH_CUT + 1] {
    let mut table = [0.0; TRUTH_CUT + 1];
    let mut l = 0;
    while l <= TRUTH_CUT {
        let over = l.saturating_sub(FLAT);
        table[l] = 1.0 - over as f64 / 50.0;
        l += 1;
    }
    table
}

/// The walk of one answer against one table. One walk serves both scores: the n-grams ending
/// at each character are found by extending those ending at the previous one. Fluency uses
/// every length for the first 150 characters; Truthfulness the 3-grams of
/// t = ("^" + answer + "$")[:202].
struct Walk {
    repeats: Repeats,
    /// Per index of t: the largest frequency of a 3-gram covering it, per source.
    max_frequency: Vec<[u16; MAX_SOURCES]>,
    /// The indexes of t that Truthfulness keeps (see `finish`).
    kept: Vec<usize>,
    /// nodes[index % 2][n]: node of the n-gram ending at character `index`; n = 0 is the
    /// root. The previous character's nodes are in the other row (no copying between them).
    nodes: [[Node; MAX_N + 1]; 2],
    /// How many of previous[1..] exist.
    previous_depth: usize,
    /// homes[index % 2][n]: the slot where the probe of the n-gram of length n + 1 ending at
    /// character `index` starts (see `advance`).
    homes: [[usize; MAX_N]; 2],
    /// Characters of the answer that Fluency walks.
    fluency_length: usize,
    totals: [u64; MAX_SOURCES],
    best: [f64; MAX_SOURCES],
}

impl Walk {
    fn new() -> Self {
        Walk {
            repeats: Repeats::new(),
            max_frequency: Vec::with_capacity(TRUTH_CUT),
            kept: Vec::with_capacity(TRUTH_CUT),
            nodes: [[ROOT; MAX_N + 1]; 2],
            previous_depth: 0,
            homes: [[0; MAX_N]; 2],
            fluency_length: 0,
            totals: [0; MAX_SOURCES],
            best: [0.0; MAX_SOURCES],
        }
    }

    fn reset(&mut self, table: &NgramTable, chars: &[char]) {
        let answer_length = chars.len();
        if let Some(&first) = chars.first() {
            self.homes[0][0] = table.prefetch_child(ROOT, 0, first);
        }
        self.repeats
            .compute(&chars[..answer_length.min(FLUENCY_USEFUL)]);
        self.max_frequency.clear();
        self.max_frequency
            .resize((answer_length + 2).min(TRUTH_CUT), [0; MAX_SOURCES]);
        self.previous_depth = 0;
        self.fluency_length = answer_length.min(FLUENCY_USEFUL);
        self.totals = [0; MAX_SOURCES];
        self.best = [0.0; MAX_SOURCES];
    }

    /// How many n-gram lengths are worth probing at answer index `index`.
    #[inline]
    fn candidates(&self, index: usize) -> usize {
        let longest = if index < FLUENCY_USEFUL { MAX_N } else { 3 };
        (self.previous_depth + 1).min(longest)
    }

    /// Walks the character `c` at `index`. The table lines of the next character's (`next`)
    /// probes are prefetched as their parents are found here: they are in the caches at the
    /// next step (see `ReferenceTables::score_answers`).
    #[inline]
    fn advance(
        &mut self,
        table: &NgramTable,
        index: usize,
        c: char,
        next: char,
        baselines: &[f64],
    ) {
        // y[l-n..l] can be in the table only if its prefix y[l-n..l-1] (previous[n-1]) is, and
        // y[l-n-1..l] only if its suffix y[l-n..l] is: extend upwards, stop at the first miss.
        let candidates = self.candidates(index);
        let [even, odd] = &mut self.nodes;
        let (previous, current) = if index % 2 == 0 {
            (odd, even)
        } else {
            (even, odd)
        };
        let [homes_even, homes_odd] = &mut self.homes;
        let (homes, next_homes) = if index % 2 == 0 {
            (homes_even, homes_odd)
        } else {
            (homes_odd, homes_even)
        };
        next_homes[0] = table.prefetch_child(ROOT, 0, next);
        // Each distinct n-gram counts once: those ending here up to the length of the longest
        // one that also ends at an earlier character were counted there.
        let counted_before = match self.repeats.lengths.get(index) {
            Some(&length) => length as usize,
            None => MAX_N,
        };
        let mut depth = 0;
        let mut added = 0;
        // One step per length (MAX_N of them), written out rather than looped: each length
        // gets its own branches (is the n-gram there, is its parent a chain, is it in its home
        // slot), which the processor predicts better than a loop's branches shared by all
        // lengths.
        const _: () = assert!(MAX_N == 10, "one extend! per length");
        macro_rules! extend {
            ($done:lifetime, $n:literal) => {
                if $n >= candidates {
                    break $done;
                }
                let Some(node) = table.child_from(previous[$n], $n, c, homes[$n]) else {
                    break $done;
                };
                current[$n + 1] = node;
                depth = $n + 1;
                if depth > counted_before {
                    added += node.lanes;
                }
                if depth < MAX_N {
                    next_homes[depth] = table.prefetch_child(node, depth, next);
                }
            };
        }
        'done: {
            extend!('done, 0);
            extend!('done, 1);
            extend!('done, 2);
            extend!('done, 3);
            extend!('done, 4);
            extend!('done, 5);
            extend!('done, 6);
            extend!('done, 7);
            extend!('done, 8);
            extend!('done, 9);
        }
        if depth >= 3 {
            mark(
                &mut self.max_frequency,
                index - 1,
                &current[3].frequencies(),
            );
        }
        if index < FLUENCY_USEFUL {
            for (lane, total) in self.totals.iter_mut().enumerate() {
                *total += (added >> (LANE_BITS * lane as u32)) & LANE_MASK;
            }
            // Up to length 100 the value never decreases: only its last value there counts.
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
        self.previous_depth = depth;
    }

    /// Adds the 3-grams of t holding a marker, then computes both scores.
    fn finish(
        &mut self,
        table: &NgramTable,
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
            |gram| table.find(gram).map(Node::frequencies),
            // The last two characters + "$" can be in the table only if "$" is, which is
            // seldom: its 1-gram (a slot every answer reads) is looked up first, not the last
            // two characters' 2-gram (often out of the caches).
            || table.child(ROOT, 0, '$').is_some(),
            truthfulness,
        );
    }
}

/// Truthfulness (scoring-spec.md §4) of `chars` against up to MAX_SOURCES sources of `ratios`
/// from `max_frequency`, the largest frequency of a 3-gram of the answer covering each index
/// of t = "^" + answer + "$" (cut): adds the 3-grams holding a marker, which `find` gives
/// (`has_end_marker`: whether the end marker's 1-gram is in the references at all). `kept` is
/// scratch space. Shared with the bench harness's prototype walk.
#[inline]
pub fn truthfulness_of(
    max_frequency: &mut [[u16; MAX_SOURCES]],
    kept: &mut Vec<usize>,
    chars: &[char],
    ratios: &[Vec<f64>],
    find: impl Fn(&[char]) -> Option<[u16; MAX_SOURCES]>,
    has_end_marker: impl FnOnce() -> bool,
    truthfulness: &mut [f64],
) {
    let k = ratios.len();
    let t_len = max_frequency.len();
    let with_end = chars.len() + 2 <= TRUTH_CUT;
    // "^" + the first two characters (or "^" + c + "$"), and the last two + "$".
    let head = match (chars.first(), chars.get(1)) {
        (Some(&a), Some(&b)) => Some(['^', a, b]),
        (Some(&a), None) if with_end => Some(['^', a, '$']),
        _ => None,
    };
    if let Some(frequencies) = head.and_then(|gram| find(&gram)) {
        mark(max_frequency, 0, &frequencies);
    }
    if with_end && chars.len() >= 2 && has_end_marker() {
        let gram = [chars[chars.len() - 2], chars[chars.len() - 1], '$'];
        if let Some(frequencies) = find(&gram) {
            mark(max_frequency, t_len - 3, &frequencies);
        }
    }
    // t[0] is "^" and the character after the answer "$": only the answer's characters
    // t[j] = chars[j - 1] can be kept. Each index is written and kept by moving the end
    // past it (no branch on the character, which is unpredictable).
    kept.clear();
    kept.resize(t_len, 0);
    let mut num_kept = 0;
    for (j, &c) in (1..t_len).zip(chars) {
        kept[num_kept] = j;
        num_kept += usize::from(!is_excluded(c));
    }
    kept.truncate(num_kept);
    let Some(&last) = kept.last() else {
        truthfulness.fill(0.0);
        return;
    };
    // The sources' running sums side by side: each is a chain of dependent additions (in
    // the spec's order), and side by side they overlap. A missing source's lane reads
    // the first source's ratios (its frequencies are 0) and is not kept.
    let lane_ratios: [&[f64]; MAX_SOURCES] =
        std::array::from_fn(|s| ratios[s.min(k - 1)].as_slice());
    let mut totals = [0.0f64; MAX_SOURCES];
    let mut best = [0.0f64; MAX_SOURCES];
    for (count, &j) in kept.iter().enumerate() {
        let frequencies = max_frequency[j];
        for ((total, ratio), &frequency) in totals.iter_mut().zip(&lane_ratios).zip(&frequencies) {
            *total += ratio[frequency as usize];
        }
        // The running mean matters at j >= 100 (the best) and at the end.
        if j >= FLAT || j == last {
            let discount = length_discount(j);
            for (best, &total) in best.iter_mut().zip(&totals) {
                let current = total / (count + 1) as f64 * discount;
                if current > *best {
                    *best = current;
                }
            }
        }
    }
    truthfulness.copy_from_slice(&best[..k]);
}

/// Raises the frequencies of t[start..start + 3] to those of the 3-gram there.
#[inline]
pub fn mark(max_frequency: &mut [[u16; MAX_SOURCES]], start: usize, frequencies: &[u16]) {
    for covered in &mut max_frequency[start..start + 3] {
        for (slot, &frequency) in covered.iter_mut().zip(frequencies) {
            *slot = (*slot).max(frequency);
        }
    }
}

/// For each of the first FLUENCY_USEFUL characters of an answer, the length of the longest
/// n-gram (at most MAX_N) ending there that also ends at an earlier character: the n-grams
/// ending there that the answer has already had.
///
/// Two texts ending at i and at j = i - d agree backwards along the diagonal d: a run along
/// it grows by one when the characters at i and i - d agree and is broken otherwise. Only the
/// earlier occurrences of each character are visited (linked from the last one).
pub struct Repeats {
    lengths: [u8; FLUENCY_USEFUL],
    /// The previous index holding the same character (NONE if none).
    previous_same: [u8; FLUENCY_USEFUL],
    /// Per diagonal: the index where its run last grew, and the run's length there.
    run_ends: [u8; FLUENCY_USEFUL],
    runs: [u8; FLUENCY_USEFUL],
    last_index: LastIndex,
}

const NONE: u8 = u8::MAX;

impl Default for Repeats {
    fn default() -> Self {
        Self::new()
    }
}

impl Repeats {
    pub fn new() -> Self {
        Repeats {
            lengths: [0; FLUENCY_USEFUL],
            previous_same: [NONE; FLUENCY_USEFUL],
            run_ends: [NONE; FLUENCY_USEFUL],
            runs: [0; FLUENCY_USEFUL],
            last_index: LastIndex::new(),
        }
    }

    /// Per character of the last `compute` (its first FLUENCY_USEFUL), the length found.
    pub fn lengths(&self) -> &[u8; FLUENCY_USEFUL] {
        &self.lengths
    }

    /// The lengths of `chars` (at most FLUENCY_USEFUL characters).
    pub fn compute(&mut self, chars: &[char]) {
        self.last_index.clear();
        self.run_ends.fill(NONE);
        for (i, &c) in chars.iter().enumerate() {
            let mut longest = 0;
            let mut j = self.last_index.replace(c, i as u8);
            self.previous_same[i] = j;
            while j != NONE {
                let diagonal = i - j as usize;
                // (Without a branch: whether a run goes on is unpredictable. j < i, so i > 0.)
                let grows = self.run_ends[diagonal] == (i - 1) as u8;
                let run = 1 + self.runs[diagonal] * u8::from(grows);
                self.runs[diagonal] = run;
                self.run_ends[diagonal] = i as u8;
                longest = longest.max(run);
                j = self.previous_same[j as usize];
            }
            self.lengths[i] = longest.min(MAX_N as u8);
        }
    }
}

/// The last index of each character in the answer so far: open addressing over code
/// points, cleared in O(1) by bumping a generation stamp.
struct LastIndex {
    chars: [u32; LAST_INDEX_CAPACITY],
    indexes: [u8; LAST_INDEX_CAPACITY],
    stamps: [u32; LAST_INDEX_CAPACITY],
    generation: u32,
}

/// Holds the at most FLUENCY_USEFUL characters of an answer at a load under 0.3.
const LAST_INDEX_CAPACITY: usize = 512;

impl LastIndex {
    fn new() -> Self {
        LastIndex {
            chars: [0; LAST_INDEX_CAPACITY],
            indexes: [0; LAST_INDEX_CAPACITY],
            stamps: [0; LAST_INDEX_CAPACITY],
            generation: 0,
        }
    }

    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamps.fill(0);
            self.generation = 1;
        }
    }

    /// Records `index` as the last index of `c`; returns the one before (NONE if none).
    #[inline]
    fn replace(&mut self, c: char, index: u8) -> u8 {
        let mask = LAST_INDEX_CAPACITY - 1;
        let mut slot = ((c as u32).wrapping_mul(0x9e37_79b9) >> 23) as usize & mask;
        loop {
            if self.stamps[slot] != self.generation {
                self.stamps[slot] = self.generation;
                self.chars[slot] = c as u32;
                self.indexes[slot] = index;
                return NONE;
            }
            if self.chars[slot] == c as u32 {
                return std::mem::replace(&mut self.indexes[slot], index);
            }
            slot = (slot + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(answers: &[&str]) -> ReferenceTables {
        let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
        ReferenceTables::build(&[Source {
            key: "P",
            answers: &answers,
        }])
        .unwrap()
    }

    fn scores(tables: &ReferenceTables, answer: &str) -> (f64, f64) {
        let (mut fluency, mut truthfulness) = ([0.0], [0.0]);
        let answer: Vec<char> = answer.chars().collect();
        tables.score_answers(
            &[answer],
            &mut Scratch::default(),
            &mut fluency,
            &mut truthfulness,
        );
        (fluency[0], truthfulness[0])
    }

    fn random_texts(count: usize, seed: u64) -> Vec<String> {
        crate::common::test_texts::random_texts("あいう漢😀ab", count, 220, seed)
    }

    #[test]
    fn excluded_characters_are_exactly_the_listed_ones() {
        let excluded = "^$、。・「」『』（）【】［］〈〉《》";
        for c in (0..0x2_0000).filter_map(char::from_u32) {
            assert_eq!(is_excluded(c), excluded.contains(c), "{c:?}");
        }
    }

    #[test]
    fn repeats_are_the_longest_earlier_n_grams() {
        let mut repeats = Repeats::new();
        for text in random_texts(200, 3) {
            let chars: Vec<char> = text.chars().take(FLUENCY_USEFUL).collect();
            repeats.compute(&chars);
            for i in 0..chars.len() {
                let earlier = |n: usize| {
                    let gram = &chars[i + 1 - n..=i];
                    (n - 1..i).any(|j| &chars[j + 1 - n..=j] == gram)
                };
                let expected = (1..=MAX_N.min(i + 1))
                    .filter(|&n| earlier(n))
                    .max()
                    .unwrap_or(0);
                assert_eq!(repeats.lengths[i] as usize, expected, "{text:?} at {i}");
            }
        }
    }

    #[test]
    fn a_reused_scratch_scores_as_a_fresh_one() {
        // Answers of all lengths one after another: nothing of a walk carries over.
        let references = random_texts(50, 11);
        let references: Vec<&str> = references.iter().map(String::as_str).collect();
        let table = tables(&references);
        let mut scratch = Scratch::default();
        for answer in random_texts(40, 12) {
            let chars: Vec<char> = answer.chars().collect();
            let (mut fluency, mut truthfulness) = ([0.0], [0.0]);
            table.score_answers(&[chars], &mut scratch, &mut fluency, &mut truthfulness);
            assert_eq!((fluency[0], truthfulness[0]), scores(&table, &answer));
        }
    }

    #[test]
    fn answers_walked_side_by_side_score_as_alone() {
        // Groups of 1 to GROUP answers of different lengths (empty ones included).
        let references = random_texts(50, 13);
        let references: Vec<&str> = references.iter().map(String::as_str).collect();
        let table = tables(&references);
        let mut answers: Vec<Vec<char>> = random_texts(3 * GROUP, 14)
            .iter()
            .map(|answer| answer.chars().collect())
            .collect();
        answers[1].clear();
        let mut scratch = Scratch::default();
        for size in 1..=GROUP {
            let group = &answers[size..2 * size];
            let (mut fluency, mut truthfulness) = (vec![0.0; size], vec![0.0; size]);
            table.score_answers(group, &mut scratch, &mut fluency, &mut truthfulness);
            for (i, answer) in group.iter().enumerate() {
                let answer: String = answer.iter().collect();
                assert_eq!((fluency[i], truthfulness[i]), scores(&table, &answer));
            }
        }
    }

    #[test]
    fn baseline_is_the_mean_raw_fluency_of_the_references() {
        // "abc": a, b, ab, c, bc, abc -> 6 at l = 3; "ab": a, b, ab -> 3.
        assert_eq!(tables(&["abc"]).baselines(), &[6.0]);
        // With both: a, b, ab are in 2 answers: (9 + 6) / 2.
        assert_eq!(tables(&["abc", "ab"]).baselines(), &[7.5]);
    }

    #[test]
    fn a_reference_scores_one_against_itself_alone() {
        assert_eq!(scores(&tables(&["abc"]), "abc"), (1.0, 1.0));
    }

    #[test]
    fn markers_take_part_only_in_truthfulness_grams_of_their_own() {
        // "^ab" and "ab$" are not in the table: no 3-gram covers anything.
        assert_eq!(scores(&tables(&["ab"]), "ab"), (1.0, 0.0));
        // A literal ^ or $ in the references is an ordinary character for the tables.
        assert_eq!(scores(&tables(&["^ab"]), "ab").1, 1.0);
        assert_eq!(scores(&tables(&["ab$"]), "ab").1, 1.0);
        assert_eq!(scores(&tables(&["xab$"]), "xab").1, 1.0);
    }

    #[test]
    fn repeated_substrings_count_once_per_answer() {
        let table = tables(&["ab"]);
        // "abab": a, b, ab counted once; "ba", "aba", "bab", "abab" are absent.
        assert_eq!(scores(&table, "abab").0, 1.0);
    }

    #[test]
    fn long_answers_keep_their_best_prefix() {
        let table = tables(&["aaa"]);
        let (fluency, truthfulness) = scores(&table, &"a".repeat(120));
        assert_eq!(fluency, 1.0);
        assert_eq!(truthfulness, 1.0);
        assert_eq!(scores(&table, ""), (0.0, 0.0));
    }

    #[test]
    fn punctuation_carries_no_truthfulness() {
        // t = "^abc。$": only a, b, c are counted, all covered by "abc".
        assert_eq!(scores(&tables(&["abc"]), "abc。").1, 1.0);
        // "x" is kept but covered by nothing: 3 of 4 characters.
        assert_eq!(scores(&tables(&["abc"]), "abcx").1, 0.75);
    }

    #[test]
    fn empty_sources_are_refused() {
        let empty: Vec<String> = Vec::new();
        let error = ReferenceTables::build(&[Source {
            key: "P",
            answers: &empty,
        }])
        .err();
        assert_eq!(error, Some(ReferenceError::EmptySource("P".to_string())));
        let blank = vec![String::new()];
        let error = ReferenceTables::build(&[Source {
            key: "S",
            answers: &blank,
        }])
        .err();
        assert_eq!(error, Some(ReferenceError::ZeroBaseline("S".to_string())));
    }
}
