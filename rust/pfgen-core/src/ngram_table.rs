//! Character n-gram document-frequency tables, stored as a trie inside one hash table.
//!
//! Every distinct n-gram (n = 1..=MAX_N) of the reference answers is a node whose key is
//! (parent node, last code point): the n-gram `g + c` is found from the node of `g` in one
//! probe. Keys are exact (no hashing of the n-gram text), so lookups never collide, and a walk
//! over an answer extends the n-grams ending at the previous character by one probe each.
//! A table holds the document frequencies of up to `MAX_SOURCES` reference sources per node.

/// Longest n-gram kept (Fluency uses 1..=10-grams; Truthfulness 3-grams).
pub const MAX_N: usize = 10;
/// Sources sharing one table (their document frequencies sit side by side).
pub const MAX_SOURCES: usize = 4;

/// Node handle used in keys and walks: 0 is the root (the empty n-gram), `slot + 1` a node.
pub type NodeCode = u32;
pub const ROOT: NodeCode = 0;

const EMPTY: u64 = u64::MAX;
const CODE_POINT_BITS: u32 = 21;

#[inline]
fn node_key(parent: NodeCode, c: char) -> u64 {
    ((parent as u64) << CODE_POINT_BITS) | c as u64
}

/// One slot of the finished table: the key and the document frequencies of its node share a
/// cache line, so a successful probe costs one memory access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    frequencies: [u16; MAX_SOURCES],
}

const EMPTY_SLOT: Slot = Slot {
    key: EMPTY,
    frequencies: [0; MAX_SOURCES],
};

/// A finished, read-only table: open addressing with linear probing; the slot of a node is its
/// identity.
pub struct NgramTable {
    slots: Vec<Slot>,
    num_sources: usize,
    num_nodes: usize,
}

impl NgramTable {
    pub fn num_sources(&self) -> usize {
        self.num_sources
    }

    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Bytes held by the table.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }

    #[inline]
    fn home_slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the high bits of key * 2^64/phi, scaled to the capacity. One
        // multiplication less than `mix` matters here: scoring probes the table ~1000 times
        // per answer.
        let spread = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((spread as u128 * self.slots.len() as u128) >> 64) as usize
    }

    /// The node of n-gram `parent + c`, if any reference answer contains it.
    #[inline]
    pub fn child(&self, parent: NodeCode, c: char) -> Option<NodeCode> {
        let key = node_key(parent, c);
        let capacity = self.slots.len();
        let mut slot = self.home_slot(key);
        loop {
            let stored = self.slots[slot].key;
            if stored == key {
                return Some(slot as NodeCode + 1);
            }
            if stored == EMPTY {
                return None;
            }
            slot += 1;
            if slot == capacity {
                slot = 0;
            }
        }
    }

    /// Document frequencies of a node, one per source of the table.
    #[inline]
    pub fn frequencies(&self, node: NodeCode) -> &[u16] {
        &self.slots[node as usize - 1].frequencies[..self.num_sources]
    }

    /// Document frequencies of a node in all MAX_SOURCES lanes (unused lanes hold 0), for
    /// branch-free sums.
    #[inline]
    pub fn frequency_lanes(&self, node: NodeCode) -> &[u16; MAX_SOURCES] {
        &self.slots[node as usize - 1].frequencies
    }

    /// The node of a whole n-gram (1..=MAX_N characters), if present.
    pub fn find(&self, gram: &[char]) -> Option<NodeCode> {
        if gram.is_empty() || gram.len() > MAX_N {
            return None;
        }
        gram.iter().try_fold(ROOT, |node, &c| self.child(node, c))
    }
}

/// Why a table cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableError {
    TooManySources(usize),
    TooManyDocuments { source: usize },
    TooManyNodes,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::TooManySources(n) => {
                write!(f, "a table holds 1 to {MAX_SOURCES} sources, got {n}")
            }
            TableError::TooManyDocuments { source } => write!(
                f,
                "source {source} has more than {} reference answers",
                u16::MAX
            ),
            TableError::TooManyNodes => write!(f, "too many distinct n-grams for one table"),
        }
    }
}

impl std::error::Error for TableError {}

/// Per source and document, what the Fluency walk of the document adds at each prefix length
/// 1..=limit: the summed document frequencies (in that source) of the n-grams first seen there.
/// Row `document * (limit + 1) + length`; column 0 is unused. (u32: at most MAX_N n-grams of
/// at most u16::MAX documents each; small enough to stay in cache while building.)
pub struct WalkAdditions {
    pub limit: usize,
    pub by_source: Vec<Vec<u32>>,
}

/// A reference answer inside the concatenated text of all sources.
struct Document {
    start: u32,
    end: u32,
    source: u8,
    index: u32,
}

/// Builds the table of up to MAX_SOURCES sources (each a list of documents) and what the
/// Fluency walk of each document adds up to length `record_limit` (for the baselines).
///
/// The trie is built one n-gram length at a time by refinement: the occurrences of an n-gram
/// (a node) are grouped together, and the nodes one character longer are the distinct next
/// characters within each group. Only the text (a few MB) is read at random, so no large hash
/// index is needed while building; a document is counted once per node because occurrences
/// stay in text order within a group.
pub fn build_table(
    sources: &[Vec<Vec<char>>],
    record_limit: usize,
) -> Result<(NgramTable, WalkAdditions), TableError> {
    let num_sources = sources.len();
    if num_sources == 0 || num_sources > MAX_SOURCES {
        return Err(TableError::TooManySources(num_sources));
    }
    let mut text: Vec<char> = Vec::new();
    let mut documents: Vec<Document> = Vec::new();
    for (source, answers) in sources.iter().enumerate() {
        if answers.len() > u16::MAX as usize {
            return Err(TableError::TooManyDocuments { source });
        }
        for (index, answer) in answers.iter().enumerate() {
            let start = u32::try_from(text.len()).map_err(|_| TableError::TooManyNodes)?;
            text.extend_from_slice(answer);
            let end = u32::try_from(text.len()).map_err(|_| TableError::TooManyNodes)?;
            documents.push(Document {
                start,
                end,
                source: source as u8,
                index: index as u32,
            });
        }
    }
    // Occurrences (start, document) of the nodes of the current length, grouped by node;
    // group g is occurrences[bounds[g]..bounds[g + 1]]. Length 0: the root, everywhere.
    let mut occurrences: Vec<(u32, u32)> = documents
        .iter()
        .enumerate()
        .flat_map(|(d, document)| (document.start..document.end).map(move |p| (p, d as u32)))
        .collect();
    let mut bounds: Vec<u32> = vec![0, occurrences.len() as u32];
    let mut next_occurrences: Vec<(u32, u32)> = Vec::with_capacity(occurrences.len());
    let mut next_bounds: Vec<u32> = Vec::new();
    let mut levels: Vec<Vec<(u64, [u16; MAX_SOURCES])>> = Vec::with_capacity(MAX_N);
    let row = record_limit + 1;
    let mut additions: Vec<Vec<u32>> = sources.iter().map(|d| vec![0; d.len() * row]).collect();
    let mut children = ChildIndex::default();
    for length in 1..=MAX_N {
        next_occurrences.clear();
        next_bounds.clear();
        next_bounds.push(0);
        let mut nodes: Vec<(u64, [u16; MAX_SOURCES])> = Vec::new();
        for (group, range) in bounds.windows(2).enumerate() {
            // The root at length 1, else node `group` of the previous length (code group + 1).
            let parent = if length == 1 {
                ROOT
            } else {
                group as NodeCode + 1
            };
            let group_occurrences = &occurrences[range[0] as usize..range[1] as usize];
            children.group(&text, &documents, group_occurrences, length);
            for child in 0..children.num_children() {
                let child_occurrences = children.occurrences(child);
                next_occurrences.extend_from_slice(child_occurrences);
                // Documents containing the n-gram: occurrences are in text order, so a
                // document's occurrences are adjacent and its first one comes first.
                let mut counts = [0u16; MAX_SOURCES];
                let mut last_document = u32::MAX;
                for &(_, document) in child_occurrences {
                    if document != last_document {
                        last_document = document;
                        counts[documents[document as usize].source as usize] += 1;
                    }
                }
                last_document = u32::MAX;
                for &(start, document) in child_occurrences {
                    if document == last_document {
                        continue;
                    }
                    last_document = document;
                    let info = &documents[document as usize];
                    let end = (start - info.start) as usize + length;
                    if end <= record_limit {
                        let source = info.source as usize;
                        additions[source][info.index as usize * row + end] += counts[source] as u32;
                    }
                }
                nodes.push((node_key(parent, children.character(child)), counts));
                next_bounds.push(next_occurrences.len() as u32);
            }
        }
        levels.push(nodes);
        // The buffers of one length serve the next but one (fresh ones cost page faults).
        std::mem::swap(&mut occurrences, &mut next_occurrences);
        std::mem::swap(&mut bounds, &mut next_bounds);
    }
    let table = freeze(&levels, num_sources)?;
    Ok((
        table,
        WalkAdditions {
            limit: record_limit,
            by_source: additions,
        },
    ))
}

/// The read-only table, sized for a load factor of about 0.7. Keys are rewritten from
/// build-time ids to final slots, shorter n-grams (the parents) first.
fn freeze(
    levels: &[Vec<(u64, [u16; MAX_SOURCES])>],
    num_sources: usize,
) -> Result<NgramTable, TableError> {
    let num_nodes: usize = levels.iter().map(Vec::len).sum();
    let capacity = (num_nodes * 10 / 7).max(16);
    if capacity >= (u32::MAX - 1) as usize {
        return Err(TableError::TooManyNodes);
    }
    let mut table = NgramTable {
        slots: vec![EMPTY_SLOT; capacity],
        num_sources,
        num_nodes,
    };
    let code_mask = (1u64 << CODE_POINT_BITS) - 1;
    // Final code of every node of the previous length, by build-time id.
    let mut parent_codes: Vec<NodeCode> = Vec::new();
    for nodes in levels {
        let mut level_codes = Vec::with_capacity(nodes.len());
        for &(key, frequencies) in nodes {
            let parent = (key >> CODE_POINT_BITS) as usize;
            let parent_code = if parent == 0 {
                ROOT
            } else {
                parent_codes[parent - 1]
            };
            let key = node_key(parent_code, '\0') | (key & code_mask);
            let mut slot = table.home_slot(key);
            while table.slots[slot].key != EMPTY {
                slot += 1;
                if slot == capacity {
                    slot = 0;
                }
            }
            table.slots[slot] = Slot { key, frequencies };
            level_codes.push(slot as NodeCode + 1);
        }
        parent_codes = level_codes;
    }
    Ok(table)
}

/// Groups the occurrences of one node by the character that follows (the children), keeping
/// text order within each child, children in order of first appearance.
#[derive(Default)]
struct ChildIndex {
    /// Open addressing from character to child, reset per group with a generation stamp.
    slot_characters: Vec<char>,
    slot_children: Vec<u32>,
    slot_stamps: Vec<u32>,
    generation: u32,
    characters: Vec<char>,
    child_of: Vec<u32>,
    offsets: Vec<u32>,
    cursor: Vec<u32>,
    grouped: Vec<(u32, u32)>,
}

impl ChildIndex {
    fn group(
        &mut self,
        text: &[char],
        documents: &[Document],
        occurrences: &[(u32, u32)],
        length: usize,
    ) {
        let capacity = (occurrences.len() * 2)
            .next_power_of_two()
            .clamp(16, 1 << 22);
        if self.slot_stamps.len() < capacity {
            self.slot_characters = vec!['\0'; capacity];
            self.slot_children = vec![0; capacity];
            self.slot_stamps = vec![0; capacity];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slot_stamps.fill(0);
            self.generation = 1;
        }
        let mask = capacity - 1;
        self.characters.clear();
        self.child_of.clear();
        self.offsets.clear();
        for &(start, document) in occurrences {
            let last = start as usize + length - 1;
            if last >= documents[document as usize].end as usize {
                self.child_of.push(u32::MAX); // the n-gram would run past its document
                continue;
            }
            let c = text[last];
            let mut slot = (c as usize).wrapping_mul(0x9e37_79b1) >> 7 & mask;
            let child = loop {
                if self.slot_stamps[slot] != self.generation {
                    self.slot_stamps[slot] = self.generation;
                    self.slot_characters[slot] = c;
                    let child = self.characters.len() as u32;
                    self.slot_children[slot] = child;
                    self.characters.push(c);
                    self.offsets.push(0);
                    break child;
                }
                if self.slot_characters[slot] == c {
                    break self.slot_children[slot];
                }
                slot = (slot + 1) & mask;
            };
            self.offsets[child as usize] += 1;
            self.child_of.push(child);
        }
        // Counts to start offsets, then place each occurrence after its child's earlier ones.
        let mut total = 0;
        for offset in &mut self.offsets {
            let count = *offset;
            *offset = total;
            total += count;
        }
        self.offsets.push(total);
        self.grouped.clear();
        self.grouped.resize(total as usize, (0, 0));
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.offsets);
        for (&occurrence, &child) in occurrences.iter().zip(&self.child_of) {
            if child != u32::MAX {
                self.grouped[self.cursor[child as usize] as usize] = occurrence;
                self.cursor[child as usize] += 1;
            }
        }
    }

    fn num_children(&self) -> usize {
        self.characters.len()
    }

    fn character(&self, child: usize) -> char {
        self.characters[child]
    }

    fn occurrences(&self, child: usize) -> &[(u32, u32)] {
        &self.grouped[self.offsets[child] as usize..self.offsets[child + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn build(sources: &[&[&str]]) -> NgramTable {
        let sources: Vec<Vec<Vec<char>>> = sources
            .iter()
            .map(|answers| answers.iter().map(|a| chars(a)).collect())
            .collect();
        build_table(&sources, 0).unwrap().0
    }

    fn df(table: &NgramTable, gram: &str) -> Vec<u16> {
        match table.find(&chars(gram)) {
            Some(node) => table.frequencies(node).to_vec(),
            None => vec![0; table.num_sources()],
        }
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
        // あ ああ ああい あい い う あう いい
        assert_eq!(table.num_nodes(), 8);
    }

    #[test]
    fn keeps_ngrams_up_to_ten_characters() {
        let table = build(&[&["0123456789abc"]]);
        assert_eq!(df(&table, "0123456789"), vec![1]);
        assert_eq!(df(&table, "3456789abc"), vec![1]);
        assert_eq!(table.find(&chars("0123456789a")), None);
    }

    #[test]
    fn astral_and_nul_characters_are_ordinary_code_points() {
        let table = build(&[&["𠮷\u{0}😀", "\u{10FFFF}"]]);
        assert_eq!(df(&table, "𠮷\u{0}"), vec![1]);
        assert_eq!(df(&table, "\u{0}😀"), vec![1]);
        assert_eq!(df(&table, "\u{10FFFF}"), vec![1]);
    }

    #[test]
    fn grows_past_the_initial_capacity() {
        let answers: Vec<String> = (0..5000).map(|i| format!("回答{i:05}です。")).collect();
        let refs: Vec<&str> = answers.iter().map(String::as_str).collect();
        let table = build(&[&refs]);
        assert_eq!(df(&table, "です。"), vec![5000]);
        assert_eq!(df(&table, "回答01234"), vec![1]);
        assert_eq!(df(&table, "回答01"), vec![1000]);
    }

    #[test]
    fn records_what_the_fluency_walk_adds() {
        let (_, additions) = build_table(&[vec![chars("abab"), chars("b")]], 3).unwrap();
        // "abab": l=1: a (1); l=2: b (2), ab (1); l=3: ba (1), aba (1); l=4 is past the limit.
        assert_eq!(additions.by_source[0][..4], [0, 1, 3, 2]);
        // "b": l=1: b (2).
        assert_eq!(additions.by_source[0][4..8], [0, 2, 0, 0]);
    }

    #[test]
    fn rejects_bad_source_counts() {
        let none: Vec<Vec<Vec<char>>> = Vec::new();
        assert!(matches!(
            build_table(&none, 0),
            Err(TableError::TooManySources(0))
        ));
        let five = vec![vec![chars("a")]; 5];
        assert!(matches!(
            build_table(&five, 0),
            Err(TableError::TooManySources(5))
        ));
    }
}
