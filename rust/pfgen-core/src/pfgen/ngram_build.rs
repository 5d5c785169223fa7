//! Building a question's n-gram table: the distinct 1..=MAX_N-grams of the reference answers,
//! their document frequencies per source, and what the Fluency walk of every reference answer
//! adds at each length (for the baselines, scoring-spec.md §2).
//!
//! Every text position is sorted by the (up to) MAX_N characters that start there, cut at the
//! end of its answer, with an LSD radix sort over dense ranks of character pairs. In that
//! order the positions sharing an n-gram are adjacent, so one sweep with a stack of open
//! n-grams (one per length) finds every n-gram and counts its documents. With m the longest
//! prefix that a position shares with a sorted neighbour, its n-grams of lengths up to m occur
//! elsewhere too (stored nodes), the one of length m + 1 occurs only here (a chain head), and
//! the longer ones continue that chain.
//!
//! The sweep does a constant amount of counting per position, whatever the number of n-grams
//! it takes part in: documents are counted from the previous position
//! of the same document in sorted order (`OpenNodes`), and a document's sum of frequencies,
//! for its baseline, from the paths of its positions in the trie of n-grams (`Visit`). Only the
//! few n-grams that first end past length FLAT are looked up one by one (`walk_additions`).

use crate::common::prefetch::{prefetch, PREFETCH_DISTANCE};
use crate::pfgen::ngram_table::{
    BuildNode, NgramTable, TableError, CHAIN, HASH_MULTIPLIER, LANE_BITS, LANE_MASK, MAX_SOURCES,
    SEPARATOR,
};
use crate::pfgen::spec::{FLAT, MAX_N};

/// What the Fluency walk of each document adds, for the baselines (scoring-spec.md §2): per source,
/// per document, a row of `limit - FLAT + 1` sums: column 0 is what the walk adds up to length
/// min(FLAT, limit), column i > 0 what it adds at length FLAT + i.
pub struct WalkAdditions {
    pub limit: usize,
    pub by_source: Vec<Vec<u64>>,
}

impl WalkAdditions {
    pub fn row_length(&self) -> usize {
        row_length(self.limit)
    }
}

fn row_length(limit: usize) -> usize {
    limit.saturating_sub(FLAT) + 1
}

/// The text of all sources' answers (documents, numbered across sources), each followed by
/// MAX_N SEPARATORs, and the dense rank of every character (0 for SEPARATOR, so a key past an
/// answer's end is 0 without a test).
struct Text {
    characters: Vec<u32>,
    ranks: Vec<u16>,
    /// The character of each rank.
    alphabet: Vec<u32>,
    sources: Vec<u8>,
    starts: Vec<u32>,
}

/// Ranks read as words: four per u64, MAX_N and a little more per position.
const WORDS: usize = MAX_N.div_ceil(4);
type RankWords = [u64; WORDS];

impl Text {
    fn new<S: AsRef<str>>(sources: &[&[S]]) -> Result<Self, TableError> {
        // UTF-8 bytes bound the characters.
        let bound: usize = sources
            .iter()
            .flat_map(|answers| answers.iter())
            .map(|answer| answer.as_ref().len() + MAX_N)
            .sum();
        let mut characters: Vec<u32> = Vec::with_capacity(bound);
        let (mut document_sources, mut starts) = (Vec::new(), Vec::new());
        for (source, answers) in sources.iter().enumerate() {
            if answers.len() > u16::MAX as usize {
                return Err(TableError::TooManyDocuments { source });
            }
            for answer in answers.iter() {
                let start = characters.len();
                characters.extend(answer.as_ref().chars().map(|c| c as u32));
                characters.extend([SEPARATOR; MAX_N]);
                document_sources.push(source as u8);
                starts.push(start as u32);
            }
        }
        // The table keeps the characters: what the bound allocated beyond them (up to three
        // UTF-8 bytes per character) goes back to the allocator.
        characters.shrink_to_fit();
        // Positions are u32 (chain positions share a u64 with CHAIN and the source).
        if characters.len() >= u32::MAX as usize {
            return Err(TableError::TooManyNodes);
        }
        // Ranks in code point order: a bit per code point marks those present, and a rank is
        // 1 + the number of marked code points below it.
        let mut present = vec![0u64; (char::MAX as usize + 1).div_ceil(64)];
        for &c in &characters {
            if let Some(word) = present.get_mut(c as usize / 64) {
                *word |= 1 << (c % 64);
            }
        }
        let mut marked_before = Vec::with_capacity(present.len());
        let mut alphabet = vec![SEPARATOR];
        for (index, &word) in present.iter().enumerate() {
            marked_before.push(alphabet.len() as u32);
            let mut bits = word;
            while bits != 0 {
                alphabet.push((index * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        if alphabet.len() > u16::MAX as usize {
            return Err(TableError::TooManyCharacters);
        }
        let rank = |c: u32| -> u16 {
            let index = c as usize / 64;
            match (present.get(index), marked_before.get(index)) {
                (Some(&word), Some(&before)) => {
                    let below = word & ((1u64 << (c % 64)) - 1);
                    (before + below.count_ones()) as u16
                }
                _ => 0, // SEPARATOR
            }
        };
        let mut ranks: Vec<u16> = characters.iter().map(|&c| rank(c)).collect();
        // Room to read WORDS words from the last position of the last answer.
        ranks.extend([0; 4]);
        Ok(Text {
            characters,
            ranks,
            alphabet,
            sources: document_sources,
            starts,
        })
    }

    /// The ranks from `position` on, four per word, the first in the low bits.
    #[inline]
    fn words(&self, position: usize) -> RankWords {
        std::array::from_fn(|word| {
            let ranks = &self.ranks[position + 4 * word..][..4];
            ranks
                .iter()
                .rev()
                .fold(0, |word, &rank| word << 16 | rank as u64)
        })
    }

    /// The entries sorted by the first MAX_N characters of their position (cut at the end of
    /// their answer): a stable LSD radix sort whose digits are pairs of characters, one pass
    /// per pair. (A question's answers hold only a few thousand distinct pairs: a digit's
    /// counters stay in the fastest cache, and there are half as many passes as characters.)
    fn sorted_entries(&self) -> Vec<u64> {
        let (pairs, num_pairs) = self.pair_ranks();
        let mut entries = self.entries();
        let mut sorted = vec![0u64; entries.len()];
        let mut starts = vec![0u32; num_pairs];
        for offset in (0..MAX_N).step_by(2).rev() {
            // Counted in text order: the reads go forwards.
            starts.fill(0);
            for positions in self.answer_ranges() {
                for &pair in &pairs[positions.start + offset..positions.end + offset] {
                    starts[pair as usize] += 1;
                }
            }
            let mut total = 0;
            for start in starts.iter_mut() {
                let count = *start;
                *start = total;
                total += count;
            }
            for (i, &entry) in entries.iter().enumerate() {
                if let Some(&ahead) = entries.get(i + PREFETCH_DISTANCE) {
                    if let Some(pair) = pairs.get(ahead as u32 as usize + offset) {
                        prefetch(pair);
                    }
                }
                let start = &mut starts[pairs[entry as u32 as usize + offset] as usize];
                sorted[*start as usize] = entry;
                *start += 1;
            }
            std::mem::swap(&mut entries, &mut sorted);
        }
        entries
    }

    /// `document << 32 | position` of every character of every answer, in text order.
    fn entries(&self) -> Vec<u64> {
        let mut entries = Vec::with_capacity(self.characters.len());
        for (document, positions) in self.answer_ranges().enumerate() {
            entries.extend(positions.map(|position| (document as u64) << 32 | position as u64));
        }
        entries
    }

    /// The positions of each answer's characters, document after document.
    fn answer_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let ends = self.starts.iter().skip(1).map(|&start| start as usize);
        let ends = ends.chain([self.characters.len()]);
        // Each answer is followed by MAX_N SEPARATORs.
        let starts = self.starts.iter().map(|&start| start as usize);
        starts.zip(ends).map(|(start, end)| start..end - MAX_N)
    }

    /// For every text index q, the rank of the pair of characters (q, q + 1) among the
    /// distinct pairs of the text in lexicographic order of their ranks (SEPARATOR's rank 0
    /// first, so a pair cut by the end of an answer sorts as the cut text does), and the
    /// number of distinct pairs.
    fn pair_ranks(&self) -> (Vec<u32>, usize) {
        let keys = self.ranks.windows(2).take(self.characters.len());
        let keys = keys.map(|pair| (pair[0] as u32) << 16 | pair[1] as u32);
        // Each index's pair, numbered first as it is first met.
        let mut distinct = DistinctKeys::default();
        let mut pairs: Vec<u32> = keys.map(|key| distinct.number(key)).collect();
        let mut lexicographic: Vec<u32> = (0..distinct.keys.len() as u32).collect();
        lexicographic.sort_unstable_by_key(|&number| distinct.keys[number as usize]);
        let mut ranks = vec![0u32; lexicographic.len()];
        for (rank, &number) in lexicographic.iter().enumerate() {
            ranks[number as usize] = rank as u32;
        }
        for pair in &mut pairs {
            *pair = ranks[*pair as usize];
        }
        (pairs, lexicographic.len())
    }

    /// Prefetches the ranks from `position` on (see `prefetch`).
    #[inline]
    fn prefetch_ranks(&self, position: usize) {
        if let Some(rank) = self.ranks.get(position) {
            prefetch(rank);
        }
    }

    /// The character of a rank lane of `words`.
    #[inline]
    fn character(&self, words: &RankWords, lane: usize) -> char {
        let rank = (words[lane / 4] >> (16 * (lane % 4))) as u16 as usize;
        let c = self.alphabet.get(rank).copied().unwrap_or(SEPARATOR);
        char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

/// Numbers distinct u32 keys in the order they are first met: open addressing with linear
/// probing, grown at half full (only a few thousand keys: the slots stay in the caches).
struct DistinctKeys {
    /// Per slot: 1 + the number of its key (0: empty).
    slots: Vec<u32>,
    keys: Vec<u32>,
}

impl Default for DistinctKeys {
    fn default() -> Self {
        DistinctKeys {
            slots: vec![0; 1 << 12],
            keys: Vec::new(),
        }
    }
}

impl DistinctKeys {
    /// The number of `key` (a new one if it is new).
    #[inline]
    fn number(&mut self, key: u32) -> u32 {
        let mask = self.slots.len() - 1;
        let mut slot = Self::home(key, mask);
        loop {
            match self.slots[slot] {
                0 => break,
                stored if self.keys[stored as usize - 1] == key => return stored - 1,
                _ => slot = (slot + 1) & mask,
            }
        }
        let number = self.keys.len() as u32;
        self.keys.push(key);
        self.slots[slot] = number + 1;
        if self.keys.len() * 2 > self.slots.len() {
            self.grow();
        }
        number
    }

    /// Fibonacci hashing (as `NgramTable::home_slot`), for a power-of-two number of slots.
    #[inline]
    fn home(key: u32, mask: usize) -> usize {
        ((key as u64).wrapping_mul(HASH_MULTIPLIER) >> 32) as usize & mask
    }

    fn grow(&mut self) {
        self.slots = vec![0; self.slots.len() * 2];
        let mask = self.slots.len() - 1;
        for (number, &key) in self.keys.iter().enumerate() {
            let mut slot = Self::home(key, mask);
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = number as u32 + 1;
        }
    }
}

/// The first lane (of up to MAX_N) holding rank 0, the end of the answer: how many n-gram
/// lengths start at the position.
#[inline]
fn available(words: &RankWords) -> usize {
    const ONES: u64 = 0x0001_0001_0001_0001;
    const HIGHS: u64 = 0x8000_8000_8000_8000;
    for (index, &word) in words.iter().enumerate() {
        // The lowest set bit marks the first zero lane exactly.
        let zeros = word.wrapping_sub(ONES) & !word & HIGHS;
        if zeros != 0 {
            return (4 * index + zeros.trailing_zeros() as usize / 16).min(MAX_N);
        }
    }
    MAX_N
}

/// How many leading characters (at most MAX_N) two positions share within their answers.
#[inline]
fn common_prefix(a: &RankWords, b: &RankWords) -> usize {
    let limit = available(a);
    for (index, (&x, &y)) in a.iter().zip(b).enumerate() {
        let difference = x ^ y;
        if difference != 0 {
            return (4 * index + difference.trailing_zeros() as usize / 16).min(limit);
        }
    }
    limit
}

/// "No position" in `OpenNodes::shared_with` (sorted indexes are stored plus one).
const NO_POSITION: u32 = 0;

/// The n-grams open during the sweep, one per length, and what is counted for them.
///
/// The documents holding an n-gram are counted from its positions (adjacent in sorted order):
/// each position counts, unless the previous position of its document in that order holds the
/// n-gram too. Both are counted at one length per position (the longest it shares with its
/// neighbours, the longest it shares with the previous position of its document) and passed
/// on to the shorter n-grams as the longer ones close: a position's work does not grow with
/// the lengths it takes part in.
struct OpenNodes {
    /// ids[n]: index of the open n-gram among the nodes of length n.
    ids: [u32; MAX_N + 1],
    /// firsts[n]: 1 + the sorted index of the first position of the open n-gram of length n.
    firsts: [u32; MAX_N + 1],
    /// occurrences[n][s]: positions of source s counted at length n.
    occurrences: [[u32; MAX_SOURCES]; MAX_N + 1],
    /// repeats[n][s]: those whose document's previous position was counted already.
    repeats: [[u32; MAX_SOURCES]; MAX_N + 1],
}

impl OpenNodes {
    fn new() -> Self {
        OpenNodes {
            ids: [0; MAX_N + 1],
            firsts: [0; MAX_N + 1],
            occurrences: [[0; MAX_SOURCES]; MAX_N + 1],
            repeats: [[0; MAX_SOURCES]; MAX_N + 1],
        }
    }

    /// How many characters the current position (holding the open n-grams of lengths
    /// 1..=depth) shares with the earlier position at 1 + sorted index `earlier`
    /// (NO_POSITION: none): the open n-grams that began at or before it hold it too.
    #[inline]
    fn shared_with(&self, depth: usize, earlier: u32) -> usize {
        self.firsts[1..=depth]
            .iter()
            .filter(|&&first| first <= earlier)
            .count()
    }
}

/// A position among the first FLAT (or `limit`) characters of its document, as the sweep
/// saw it: the sum of the frequencies of a document's distinct n-grams is, over these
/// positions in sorted order, the sum along the path of each (its n-grams: the stored
/// nodes of lengths 1..=shared, then `chain` chain positions of frequency 1) less the sum
/// along the path it shares with the document's previous such position (lengths 1..=common).
struct Visit {
    document: u32,
    deepest: u32,
    common_id: u32,
    shared: u8,
    common: u8,
    chain: u8,
}

/// Builds the table of up to MAX_SOURCES sources (each a list of documents) and what the
/// Fluency walk of each document adds up to length `record_limit` (for the baselines).
pub fn build_table<S: AsRef<str>>(
    sources: &[&[S]],
    record_limit: usize,
) -> Result<(NgramTable, WalkAdditions), TableError> {
    let num_sources = sources.len();
    if num_sources == 0 || num_sources > MAX_SOURCES {
        return Err(TableError::TooManySources(num_sources));
    }
    let text = Text::new(sources)?;
    // Past this length the walk's additions are found in `walk_additions`.
    let undiscounted = FLAT.min(record_limit);
    let sorted = text.sorted_entries();
    let mut levels: Vec<Vec<BuildNode>> = (0..=MAX_N).map(|_| Vec::new()).collect();
    let mut open = OpenNodes::new();
    // Per document: 1 + the sorted index of its previous position, and of its previous
    // position before `undiscounted` (NO_POSITION: none yet).
    let mut previous = vec![NO_POSITION; text.starts.len()];
    let mut previous_visited = vec![NO_POSITION; text.starts.len()];
    // At most one per position; only the pages written count (growing by doubling would
    // hold both copies at once).
    let mut visits: Vec<Visit> = Vec::with_capacity(sorted.len());
    let mut depth = 0; // lengths 1..=depth are open
                       // The ranks of sorted position i + k (zeros past the end): read a position ahead of their
                       // use, as the positions are scattered over the text and each read misses the caches.
    let words_at = |i: usize| {
        sorted
            .get(i)
            .map_or([0; WORDS], |&e| text.words(e as u32 as usize))
    };
    let (mut words, mut next_words) = (words_at(0), words_at(1));
    let mut shared_before = 0;
    for (i, &entry) in sorted.iter().enumerate() {
        let (position, document) = (entry as u32, (entry >> 32) as usize);
        if let Some(&ahead) = sorted.get(i + PREFETCH_DISTANCE) {
            text.prefetch_ranks(ahead as u32 as usize);
        }
        let after_next_words = words_at(i + 2);
        let shared_after = common_prefix(&words, &next_words);
        while depth > shared_before {
            close(&mut open, &mut levels, depth);
            depth -= 1;
        }
        let available = available(&words);
        let shared = shared_before.max(shared_after).min(available);
        let source = text.sources[document] as usize;
        let sorted_index = i as u32 + 1;
        for (n, level) in levels
            .iter_mut()
            .enumerate()
            .take(shared + 1)
            .skip(depth + 1)
        {
            open.ids[n] = level.len() as u32;
            open.firsts[n] = sorted_index;
            level.push(BuildNode {
                parent: parent_id(&open, n),
                c: text.character(&words, n - 1),
                value: 0,
            });
        }
        depth = shared;
        // (Length 0 collects what no node reads.)
        open.occurrences[shared][source] += 1;
        let common = open.shared_with(shared, previous[document]);
        open.repeats[common][source] += 1;
        previous[document] = sorted_index;
        if ((position - text.starts[document]) as usize) < undiscounted {
            let common = open.shared_with(shared, previous_visited[document]);
            previous_visited[document] = sorted_index;
            visits.push(Visit {
                document: document as u32,
                deepest: open.ids[shared],
                common_id: open.ids[common],
                shared: shared as u8,
                common: common as u8,
                chain: (available - shared) as u8,
            });
        }
        if shared < available {
            // This position's n-gram of length shared + 1 occurs nowhere else: a chain head,
            // and each longer n-gram of its text is in this one document, found here.
            let head = shared + 1;
            levels[head].push(BuildNode {
                parent: parent_id(&open, head),
                c: text.character(&words, shared),
                value: CHAIN | (source as u64) << 32 | position as u64,
            });
        }
        (words, next_words) = (next_words, after_next_words);
        shared_before = shared_after;
    }
    while depth > 0 {
        close(&mut open, &mut levels, depth);
        depth -= 1;
    }
    let sums = document_sums(&levels, &visits, &text.sources);
    drop(visits);
    levels.remove(0);
    let documents: Vec<std::ops::Range<usize>> = text.answer_ranges().collect();
    let Text {
        characters,
        sources: document_sources,
        ..
    } = text;
    let table = NgramTable::freeze(levels, characters, num_sources)?;
    let additions = walk_additions(&table, &documents, &document_sources, sums, record_limit);
    // Split by source (documents are numbered source after source).
    let mut rest = additions.as_slice();
    let by_source = sources
        .iter()
        .map(|answers| {
            let (own, others) = rest.split_at(answers.len() * row_length(record_limit));
            rest = others;
            own.to_vec()
        })
        .collect();
    Ok((
        table,
        WalkAdditions {
            limit: record_limit,
            by_source,
        },
    ))
}

/// The parent of a new node of length n: the root, or the open node one character shorter.
#[inline]
fn parent_id(open: &OpenNodes, n: usize) -> u32 {
    if n == 1 {
        0
    } else {
        open.ids[n - 1] + 1
    }
}

/// Closes the open n-gram of length n: its document frequencies, and its counts passed on to
/// the n-gram one character shorter.
fn close(open: &mut OpenNodes, levels: &mut [Vec<BuildNode>], n: usize) {
    let occurrences = std::mem::take(&mut open.occurrences[n]);
    let repeats = std::mem::take(&mut open.repeats[n]);
    let mut value = 0u64;
    for lane in 0..MAX_SOURCES {
        // At most u16::MAX documents per source: the lanes do not overflow.
        value |= ((occurrences[lane] - repeats[lane]) as u64) << (LANE_BITS * lane as u32);
        open.occurrences[n - 1][lane] += occurrences[lane];
        open.repeats[n - 1][lane] += repeats[lane];
    }
    levels[n][open.ids[n] as usize].value = value;
}

/// Per document: the sum of the frequencies (in its source) of its distinct n-grams that
/// start within its first FLAT (or `limit`) characters, from the `visits` (see `Visit`).
fn document_sums(levels: &[Vec<BuildNode>], visits: &[Visit], sources: &[u8]) -> Vec<u64> {
    // path_sums[n][id]: the frequencies of the node and its ancestors, in lanes (at most
    // MAX_N frequencies of u16::MAX each per lane: no carries); unused for chain heads.
    let mut path_sums: Vec<Vec<u64>> = vec![Vec::new()];
    for n in 1..levels.len() {
        let shorter = &path_sums[n - 1];
        let sums = levels[n]
            .iter()
            .map(|node| match (node.value & CHAIN, node.parent) {
                (0, 0) => node.value,
                (0, parent) => node.value + shorter[parent as usize - 1],
                _ => 0,
            })
            .collect();
        path_sums.push(sums);
    }
    let path_sum = |length: u8, id: u32, lane: u8| -> u64 {
        match length {
            0 => 0,
            _ => {
                let lanes = path_sums[length as usize][id as usize];
                (lanes >> (LANE_BITS * lane as u32)) & LANE_MASK
            }
        }
    };
    let mut sums = vec![0u64; sources.len()];
    for visit in visits {
        let lane = sources[visit.document as usize];
        sums[visit.document as usize] += path_sum(visit.shared, visit.deepest, lane)
            + visit.chain as u64
            - path_sum(visit.common, visit.common_id, lane);
    }
    sums
}

/// The walk additions of every document (`documents`: where each is in the table's text, see
/// `Text::answer_ranges`), a row of `row_length(limit)` each: column 0 from `sums` (see
/// `document_sums`), less the n-grams that start before min(FLAT, limit) but first end after
/// it; the other columns from the n-grams that first end past FLAT, looked up in the table.
/// (Only the documents longer than min(FLAT, limit) have such n-grams, and only their next
/// few dozen ends are looked at.)
fn walk_additions(
    table: &NgramTable,
    documents: &[std::ops::Range<usize>],
    sources: &[u8],
    mut sums: Vec<u64>,
    limit: usize,
) -> Vec<u64> {
    let undiscounted = FLAT.min(limit);
    let row = row_length(limit);
    let mut rows = vec![0u64; sources.len() * row];
    for (document, positions) in documents.iter().enumerate() {
        let characters = &table.text()[positions.clone()];
        let document_row = &mut rows[document * row..(document + 1) * row];
        if characters.len() > undiscounted {
            let chars: Vec<char> = characters
                .iter()
                .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            let lane = sources[document] as usize;
            // Ends past `undiscounted` of n-grams starting before it, or of recorded columns.
            let last_end = chars.len().min(limit.max(undiscounted + MAX_N - 1));
            for end in undiscounted + 1..=last_end {
                for n in repeated_length(&chars, end) + 1..=end.min(MAX_N) {
                    let frequency = table
                        .find(&chars[end - n..end])
                        .map_or(0, |node| node.frequencies()[lane] as u64);
                    if end - n < undiscounted {
                        sums[document] -= frequency;
                    }
                    if end > FLAT && end <= limit {
                        document_row[end - FLAT] += frequency;
                    }
                }
            }
        }
        document_row[0] = sums[document];
    }
    rows
}

/// The length of the longest n-gram (at most MAX_N) that ends at `end` (a prefix length) of
/// `chars` and also ends earlier: the n-grams ending there up to that length are not new.
fn repeated_length(chars: &[char], end: usize) -> usize {
    let ending = chars[..end].iter().rev();
    (1..end)
        .map(|earlier| {
            let before = chars[..earlier].iter().rev();
            before
                .zip(ending.clone())
                .take(MAX_N)
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn build(sources: &[&[&str]]) -> NgramTable {
        build_table(sources, 0).unwrap().0
    }

    fn df(table: &NgramTable, gram: &str) -> Vec<u16> {
        let lanes = match table.find(&chars(gram)) {
            Some(node) => node.frequencies(),
            None => [0; MAX_SOURCES],
        };
        lanes[..table.num_sources()].to_vec()
    }

    #[test]
    fn counts_documents_not_occurrences() {
        let table = build(&[&["ああい", "あう"], &["いい"]]);
        assert_eq!(df(&table, "あ"), vec![2, 0]);
        assert_eq!(df(&table, "い"), vec![1, 1]);
        assert_eq!(df(&table, "ああ"), vec![1, 0]);
        assert_eq!(df(&table, "いい"), vec![0, 1]);
        assert_eq!(df(&table, "ああい"), vec![1, 0]);
        assert_eq!(df(&table, "う"), vec![1, 0]);
        assert_eq!(df(&table, "え"), vec![0, 0]);
        // Stored: あ い (several occurrences) and the chain heads う ああ あい あう いい
        // (ああい continues the chain of ああ).
        assert_eq!(table.num_nodes(), 7);
    }

    #[test]
    fn chains_follow_the_text_of_their_only_occurrence() {
        let table = build(&[&["xabcdefghij", "xab"], &["zz"]]);
        assert_eq!(df(&table, "bcdefghij"), vec![1, 0]);
        assert_eq!(df(&table, "abcdefghij"), vec![1, 0]);
        assert_eq!(df(&table, "bcdefghia"), vec![0, 0]);
        // A chain ends with its reference answer.
        assert_eq!(df(&table, "hij"), vec![1, 0]);
        assert_eq!(table.find(&chars("hijz")), None);
        assert_eq!(df(&table, "xab"), vec![2, 0]);
        assert_eq!(df(&table, "xabc"), vec![1, 0]);
        assert_eq!(df(&table, "zz"), vec![0, 1]);
        // Chain positions of one occurrence are one node for every length.
        let short = table.find(&chars("cde")).unwrap();
        let long = table.find(&chars("cdef")).unwrap();
        assert_eq!(short, long);
    }

    #[test]
    fn keeps_ngrams_up_to_ten_characters() {
        let table = build(&[&["0123456789abc", "0123456789abc"]]);
        assert_eq!(df(&table, "0123456789"), vec![2]);
        assert_eq!(df(&table, "3456789abc"), vec![2]);
        assert_eq!(table.find(&chars("0123456789a")), None);
    }

    #[test]
    fn astral_and_nul_characters_are_ordinary_code_points() {
        let table = build(&[&["𠮷\u{0}😀", "\u{10FFFF}", "𠮷\u{0}"]]);
        assert_eq!(df(&table, "𠮷\u{0}"), vec![2]);
        assert_eq!(df(&table, "\u{0}😀"), vec![1]);
        assert_eq!(df(&table, "\u{10FFFF}"), vec![1]);
    }

    #[test]
    fn holds_many_ngrams() {
        let answers: Vec<String> = (0..5000).map(|i| format!("回答{i:05}です。")).collect();
        let table = build(&[&answers.iter().map(String::as_str).collect::<Vec<_>>()]);
        assert_eq!(df(&table, "です。"), vec![5000]);
        assert_eq!(df(&table, "回答01234"), vec![1]);
        assert_eq!(df(&table, "回答01234です"), vec![1]);
        assert_eq!(df(&table, "回答01"), vec![1000]);
    }

    #[test]
    fn entries_are_sorted_by_their_first_characters_then_by_position() {
        // Thousands of characters, so that the pairs outgrow DistinctKeys' first table; half
        // of them one of five, so that texts share long beginnings.
        let mut state = 5u64;
        let mut next = move |bound: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % bound
        };
        let answers: Vec<String> = (0..1000)
            .map(|_| {
                let length = next(60);
                (0..length)
                    .map(|_| {
                        let rank = if next(2) == 0 { next(5) } else { next(3000) };
                        char::from_u32(0x4e00 + rank as u32).unwrap()
                    })
                    .collect()
            })
            .collect();
        let text = Text::new(&[answers.as_slice()]).unwrap();
        // Up to MAX_N characters, cut at the end of the answer (SEPARATOR sorts first).
        let key = |entry: &u64| -> Vec<u32> {
            let position = *entry as u32 as usize;
            let window = &text.characters[position..position + MAX_N];
            window.iter().map(|&c| c.wrapping_add(1)).collect()
        };
        let mut expected = text.entries();
        expected.sort_by_key(|entry| (key(entry), *entry));
        assert_eq!(text.sorted_entries(), expected);
        let (_, num_pairs) = text.pair_ranks();
        assert!(num_pairs > 4096, "{num_pairs} pairs");
    }

    #[test]
    fn distinct_keys_are_numbered_as_first_met() {
        let mut distinct = DistinctKeys::default();
        let keys: Vec<u32> = (0..20_000u32)
            .map(|i| i.wrapping_mul(7919) % 9000)
            .collect();
        let mut first_met: HashMap<u32, u32> = HashMap::new();
        for &key in &keys {
            let next = first_met.len() as u32;
            let expected = *first_met.entry(key).or_insert(next);
            assert_eq!(distinct.number(key), expected);
        }
        assert_eq!(distinct.keys.len(), first_met.len());
    }

    fn random_answers(count: usize, seed: u64) -> Vec<String> {
        crate::common::test_texts::random_texts("あいうえおか漢字😀\u{0}ab", count, 30, seed)
    }

    #[test]
    fn frequencies_and_additions_match_the_definition() {
        let sources: Vec<Vec<String>> = (0..3).map(|s| random_answers(60, s + 7)).collect();
        check_against_definition(&sources, 20);
    }

    #[test]
    fn additions_past_flat_match_the_definition() {
        // Answers of up to 160 characters: n-grams that start before FLAT and first end after
        // it, recorded columns (up to FLAT + 30), and ends past the limit.
        let sources: Vec<Vec<String>> = (0..2)
            .map(|s| crate::common::test_texts::random_texts("あいうえお漢字ab", 40, 160, s + 3))
            .collect();
        check_against_definition(&sources, FLAT + 30);
    }

    fn check_against_definition(sources: &[Vec<String>], limit: usize) {
        let views: Vec<&[String]> = sources.iter().map(Vec::as_slice).collect();
        let (table, additions) = build_table(&views, limit).unwrap();
        // Document frequencies of every n-gram, directly.
        let mut expected: HashMap<Vec<char>, [u16; MAX_SOURCES]> = HashMap::new();
        for (source, answers) in sources.iter().enumerate() {
            for answer in answers {
                let chars = chars(answer);
                let grams: HashSet<&[char]> = (1..=MAX_N).flat_map(|n| chars.windows(n)).collect();
                for gram in grams {
                    expected.entry(gram.to_vec()).or_default()[source] += 1;
                }
            }
        }
        for (gram, frequencies) in &expected {
            let node = table.find(gram).expect("every reference n-gram is found");
            assert_eq!(&node.frequencies(), frequencies, "{gram:?}");
        }
        assert_eq!(table.find(&chars("zz")), None);
        // What each answer's walk adds at each length: the frequencies of the n-grams that
        // first end there.
        for (source, answers) in sources.iter().enumerate() {
            for (index, answer) in answers.iter().enumerate() {
                let chars = chars(answer);
                let mut seen = HashSet::new();
                let mut row = vec![0u64; additions.row_length()];
                for end in 1..=chars.len().min(limit) {
                    for n in 1..=end.min(MAX_N) {
                        let gram = &chars[end - n..end];
                        if seen.insert(gram.to_vec()) {
                            row[end.saturating_sub(FLAT)] += expected[gram][source] as u64;
                        }
                    }
                }
                let start = index * additions.row_length();
                let got = &additions.by_source[source][start..start + additions.row_length()];
                assert_eq!(got, row, "source {source} answer {index}");
            }
        }
    }

    #[test]
    fn records_what_the_fluency_walk_adds() {
        // Columns: 0 = what is added up to FLAT, i = at FLAT + i.
        let long: String = "a".repeat(FLAT) + "bab";
        let (_, additions) = build_table(&[&[long.as_str(), "b"]], FLAT + 2).unwrap();
        assert_eq!(additions.row_length(), 3);
        // Up to 100: a..a (1..=10 a's), each in 1 document: 10.
        // l = 101: b (2 documents), ab, aab, ..., a^9 b: 2 + 9 = 11.
        // l = 102: ba, aba, ..., a^8 b a: 9 n-grams (the 1-gram a is not new).
        assert_eq!(additions.by_source[0][..3], [10, 11, 9]);
        // "b": l = 1: b (2).
        assert_eq!(additions.by_source[0][3..6], [2, 0, 0]);
    }

    #[test]
    fn rejects_bad_source_counts() {
        let none: [&[&str]; 0] = [];
        assert!(matches!(
            build_table(&none, 0),
            Err(TableError::TooManySources(0))
        ));
        let four: [&[&str]; 4] = [&["a"]; 4];
        assert!(matches!(
            build_table(&four, 0),
            Err(TableError::TooManySources(4))
        ));
    }
}
