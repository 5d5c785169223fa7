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

#[inline]
fn mix(key: u64) -> u64 {
    // A strong 64-bit finaliser (splitmix64): keys are structured, probes need spread.
    let mut h = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A finished, read-only table: open addressing with linear probing; the slot of a node is its
/// identity (document frequencies are stored by slot).
pub struct NgramTable {
    keys: Vec<u64>,
    /// `document_frequency[slot * num_sources + source]`.
    document_frequency: Vec<u16>,
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

    /// Bytes held by the table's arrays.
    pub fn memory_bytes(&self) -> usize {
        self.keys.len() * 8 + self.document_frequency.len() * 2
    }

    #[inline]
    fn home_slot(&self, key: u64) -> usize {
        ((mix(key) as u128 * self.keys.len() as u128) >> 64) as usize
    }

    /// The node of n-gram `parent + c`, if any reference answer contains it.
    #[inline]
    pub fn child(&self, parent: NodeCode, c: char) -> Option<NodeCode> {
        let key = node_key(parent, c);
        let capacity = self.keys.len();
        let mut slot = self.home_slot(key);
        loop {
            let stored = self.keys[slot];
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
        let start = (node as usize - 1) * self.num_sources;
        &self.document_frequency[start..start + self.num_sources]
    }

    /// The node of a whole n-gram (1..=MAX_N characters), if present.
    pub fn find(&self, gram: &[char]) -> Option<NodeCode> {
        if gram.is_empty() || gram.len() > MAX_N {
            return None;
        }
        gram.iter().try_fold(ROOT, |node, &c| self.child(node, c))
    }
}

/// Collects the n-grams of reference answers, one source after another, then freezes them into
/// an `NgramTable`. Nodes are numbered in creation order, so a parent always precedes its children.
pub struct TableBuilder {
    /// Power-of-two capacity; `slot_node[slot]` is the node stored in that slot.
    keys: Vec<u64>,
    slot_node: Vec<u32>,
    /// Per node: its key (parent node code, code point), counts per source, last document seen.
    node_keys: Vec<u64>,
    counts: Vec<u16>,
    last_document: Vec<u32>,
    num_sources: usize,
    documents_added: u32,
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
                write!(f, "a table holds at most {MAX_SOURCES} sources, got {n}")
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

impl TableBuilder {
    pub fn new(num_sources: usize) -> Result<Self, TableError> {
        if num_sources == 0 || num_sources > MAX_SOURCES {
            return Err(TableError::TooManySources(num_sources));
        }
        let capacity = 1 << 16;
        Ok(TableBuilder {
            keys: vec![EMPTY; capacity],
            slot_node: vec![0; capacity],
            node_keys: Vec::new(),
            counts: Vec::new(),
            last_document: Vec::new(),
            num_sources,
            documents_added: 0,
        })
    }

    /// Adds one reference answer of `source`: every distinct substring of 1..=MAX_N characters
    /// gains one document. Returns, for the first `record_limit` prefix lengths l = 1, 2, ...,
    /// the nodes first seen at l (in walk order) as `(nodes, new_per_prefix)`, which is exactly
    /// what the Fluency walk of this answer would add, so its baseline needs no second walk.
    pub fn add_document(
        &mut self,
        source: usize,
        text: &[char],
        record_limit: usize,
        recorded_nodes: &mut Vec<u32>,
        recorded_per_prefix: &mut Vec<u8>,
    ) -> Result<(), TableError> {
        self.documents_added = self
            .documents_added
            .checked_add(1)
            .ok_or(TableError::TooManyNodes)?;
        let document = self.documents_added;
        // chain[n] = node id + 1 of the n-gram ending at the previous character (0 = root/none).
        let mut previous = [0u32; MAX_N + 1];
        let mut current = [0u32; MAX_N + 1];
        for (index, &c) in text.iter().enumerate() {
            let length = (index + 1).min(MAX_N);
            let mut new_here = 0u8;
            for n in 1..=length {
                let parent = if n == 1 { 0 } else { previous[n - 1] };
                let node = self.get_or_insert(parent, c)?;
                current[n] = node + 1;
                let node = node as usize;
                if self.last_document[node] != document {
                    self.last_document[node] = document;
                    let count = &mut self.counts[node * self.num_sources + source];
                    *count = count
                        .checked_add(1)
                        .ok_or(TableError::TooManyDocuments { source })?;
                    if index < record_limit {
                        recorded_nodes.push(node as u32);
                        new_here += 1;
                    }
                }
            }
            if index < record_limit {
                recorded_per_prefix.push(new_here);
            }
            std::mem::swap(&mut previous, &mut current);
        }
        Ok(())
    }

    /// The count of a node for a source, while building (for baselines).
    #[inline]
    pub fn count(&self, node: u32, source: usize) -> u16 {
        self.counts[node as usize * self.num_sources + source]
    }

    /// Node id for (parent id + 1 or 0 for root, c), created if new.
    #[inline]
    fn get_or_insert(&mut self, parent: u32, c: char) -> Result<u32, TableError> {
        let key = node_key(parent, c);
        let mask = self.keys.len() - 1;
        let mut slot = (mix(key) >> 32) as usize & mask;
        loop {
            let stored = self.keys[slot];
            if stored == key {
                return Ok(self.slot_node[slot]);
            }
            if stored == EMPTY {
                break;
            }
            slot = (slot + 1) & mask;
        }
        let node = u32::try_from(self.node_keys.len()).map_err(|_| TableError::TooManyNodes)?;
        // Node codes (node + 1) must stay below 2^(64 - 21) and u32::MAX.
        if node >= u32::MAX - 1 {
            return Err(TableError::TooManyNodes);
        }
        self.keys[slot] = key;
        self.slot_node[slot] = node;
        self.node_keys.push(key);
        self.counts.extend(std::iter::repeat_n(0, self.num_sources));
        self.last_document.push(0);
        if self.node_keys.len() * 2 > self.keys.len() {
            self.grow();
        }
        Ok(node)
    }

    fn grow(&mut self) {
        let capacity = self.keys.len() * 2;
        let mask = capacity - 1;
        let mut keys = vec![EMPTY; capacity];
        let mut slot_node = vec![0u32; capacity];
        for (node, &key) in self.node_keys.iter().enumerate() {
            let mut slot = (mix(key) >> 32) as usize & mask;
            while keys[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            keys[slot] = key;
            slot_node[slot] = node as u32;
        }
        self.keys = keys;
        self.slot_node = slot_node;
    }

    pub fn num_nodes(&self) -> usize {
        self.node_keys.len()
    }

    /// The read-only table, sized for a load factor of about 0.7. Keys are rewritten from
    /// build-time node ids to final slots, parents first (node ids are in creation order).
    pub fn freeze(self) -> NgramTable {
        let num_nodes = self.node_keys.len();
        let capacity = (num_nodes * 10 / 7).max(16);
        let mut table = NgramTable {
            keys: vec![EMPTY; capacity],
            document_frequency: vec![0; capacity * self.num_sources],
            num_sources: self.num_sources,
            num_nodes,
        };
        let mut final_code = vec![0u32; num_nodes + 1]; // by build-time code (id + 1)
        let code_mask = (1u64 << CODE_POINT_BITS) - 1;
        for (node, &key) in self.node_keys.iter().enumerate() {
            let parent = (key >> CODE_POINT_BITS) as usize;
            let key = ((final_code[parent] as u64) << CODE_POINT_BITS) | (key & code_mask);
            let mut slot = table.home_slot(key);
            while table.keys[slot] != EMPTY {
                slot += 1;
                if slot == capacity {
                    slot = 0;
                }
            }
            table.keys[slot] = key;
            final_code[node + 1] = slot as u32 + 1;
            let from = node * self.num_sources;
            let to = slot * self.num_sources;
            table.document_frequency[to..to + self.num_sources]
                .copy_from_slice(&self.counts[from..from + self.num_sources]);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn build(sources: &[&[&str]]) -> NgramTable {
        let mut builder = TableBuilder::new(sources.len()).unwrap();
        let (mut nodes, mut per_prefix) = (Vec::new(), Vec::new());
        for (source, answers) in sources.iter().enumerate() {
            for answer in answers.iter() {
                builder
                    .add_document(source, &chars(answer), 0, &mut nodes, &mut per_prefix)
                    .unwrap();
            }
        }
        builder.freeze()
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
        let mut builder = TableBuilder::new(1).unwrap();
        let (mut nodes, mut per_prefix) = (Vec::new(), Vec::new());
        builder
            .add_document(0, &chars("abab"), 3, &mut nodes, &mut per_prefix)
            .unwrap();
        // l=1: a; l=2: b, ab; l=3: ba, aba (a already seen); l=4 not recorded.
        assert_eq!(per_prefix, vec![1, 2, 2]);
        assert_eq!(nodes.len(), 5);
    }

    #[test]
    fn rejects_bad_source_counts() {
        assert_eq!(TableBuilder::new(0).err(), Some(TableError::TooManySources(0)));
        assert_eq!(TableBuilder::new(5).err(), Some(TableError::TooManySources(5)));
    }
}
