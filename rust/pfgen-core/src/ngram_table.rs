//! Character n-gram document-frequency tables, stored as a trie inside one hash table.
//!
//! Every distinct n-gram (n = 1..=MAX_N) of the reference answers is a node whose key is
//! (parent node, last code point): the n-gram `g + c` is found from the node of `g` in one
//! probe. Keys are exact (no hashing of the n-gram text), so lookups never collide, and a walk
//! over an answer extends the n-grams ending at the previous character by one probe each.
//! A table holds the document frequencies of up to `MAX_SOURCES` reference sources per node.

use std::sync::Mutex;

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

/// An n-gram first seen in a document while building: `end` is the prefix length at which
/// the Fluency walk of that document adds it.
#[derive(Clone, Copy)]
pub struct FirstSeen {
    pub document: u32,
    pub end: u16,
    pub length: u8,
    pub node: u32,
}

/// The n-grams of one length while building: a growable hash index from (parent node of the
/// previous length, code point) to a node id numbered in creation order.
struct Level {
    /// (key, node) pairs: one cache line per probe.
    index: Vec<(u64, u32)>,
    node_keys: Vec<u64>,
    nodes: Vec<NodeCounts>,
}

/// Per node while building: documents per source, and the last document that counted it
/// (each document counts a distinct n-gram once).
#[derive(Clone, Copy)]
struct NodeCounts {
    last_document: u32,
    counts: [u16; MAX_SOURCES],
}

/// Index buffers of finished builds, kept for the next ones: a fresh buffer costs the kernel
/// zeroing its pages, about a quarter of the build time when every build allocates anew.
static INDEX_POOL: Mutex<Vec<Vec<(u64, u32)>>> = Mutex::new(Vec::new());
/// Buffers kept at most, and the smallest worth keeping (in entries).
const POOL_BUFFERS: usize = 32;
const POOL_MIN_ENTRIES: usize = 1 << 16;
const INITIAL_INDEX_ENTRIES: usize = 1 << 12;

/// An index buffer of `entries` empty slots, reusing a pooled one when one is large enough.
fn take_index(entries: usize) -> Vec<(u64, u32)> {
    let reused = INDEX_POOL.lock().ok().and_then(|mut pool| {
        let best = (0..pool.len())
            .filter(|&i| pool[i].capacity() >= entries)
            .min_by_key(|&i| pool[i].capacity())?;
        Some(pool.swap_remove(best))
    });
    let mut buffer = reused.unwrap_or_default();
    buffer.clear();
    buffer.resize(entries, (EMPTY, 0));
    buffer
}

fn give_index(buffer: Vec<(u64, u32)>) {
    if buffer.capacity() < POOL_MIN_ENTRIES {
        return;
    }
    if let Ok(mut pool) = INDEX_POOL.lock() {
        pool.push(buffer);
        if pool.len() > POOL_BUFFERS {
            if let Some(smallest) = (0..pool.len()).min_by_key(|&i| pool[i].capacity()) {
                pool.swap_remove(smallest);
            }
        }
    }
}

/// Frees the pooled index buffers (after the last build).
pub fn release_pooled_buffers() {
    if let Ok(mut pool) = INDEX_POOL.lock() {
        *pool = Vec::new();
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        give_index(std::mem::take(&mut self.index));
    }
}

impl Level {
    fn new() -> Self {
        Level {
            index: take_index(INITIAL_INDEX_ENTRIES),
            node_keys: Vec::new(),
            nodes: Vec::new(),
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (mix(key) >> 32) as usize & (self.index.len() - 1)
    }

    #[inline]
    fn get_or_insert(&mut self, key: u64) -> Result<u32, TableError> {
        let mask = self.index.len() - 1;
        let mut slot = self.home(key);
        loop {
            let (stored, node) = self.index[slot];
            if stored == key {
                return Ok(node);
            }
            if stored == EMPTY {
                break;
            }
            slot = (slot + 1) & mask;
        }
        let node = u32::try_from(self.node_keys.len()).map_err(|_| TableError::TooManyNodes)?;
        self.index[slot] = (key, node);
        self.node_keys.push(key);
        self.nodes.push(NodeCounts {
            last_document: 0,
            counts: [0; MAX_SOURCES],
        });
        if self.node_keys.len() * 2 > self.index.len() {
            self.grow();
        }
        Ok(node)
    }

    fn grow(&mut self) {
        let larger = take_index(self.index.len() * 2);
        give_index(std::mem::replace(&mut self.index, larger));
        let mask = self.index.len() - 1;
        for (node, &key) in self.node_keys.iter().enumerate() {
            let mut slot = self.home(key);
            while self.index[slot].0 != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.index[slot] = (key, node as u32);
        }
    }
}

/// Positions whose slots are prefetched together while building.
const PREFETCH_BATCH: usize = 16;

/// Asks the CPU to start loading `value`'s cache line (a hint: no effect on results).
#[inline]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching has no memory effects, and the address comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            value as *const T as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        )
    };
}

/// Key of the n-gram of `length` starting at `start`, from the node of its prefix.
#[inline]
fn level_key(length: usize, nodes: &[u32], text: &[char], start: usize) -> u64 {
    let parent = if length == 1 { ROOT } else { nodes[start] + 1 };
    node_key(parent, text[start + length - 1])
}

/// Collects the n-grams of reference answers, one source after another, then freezes them into
/// an `NgramTable`. It works one n-gram length at a time: the index of one length is small
/// enough to stay in cache, which makes building several times faster than one big index.
pub struct TableBuilder {
    levels: Vec<Level>,
    num_sources: usize,
    documents_added: u32,
}

impl TableBuilder {
    pub fn new(num_sources: usize) -> Result<Self, TableError> {
        if num_sources == 0 || num_sources > MAX_SOURCES {
            return Err(TableError::TooManySources(num_sources));
        }
        Ok(TableBuilder {
            levels: (0..MAX_N).map(|_| Level::new()).collect(),
            num_sources,
            documents_added: 0,
        })
    }

    /// Adds the reference answers of `source`: each distinct substring of 1..=MAX_N characters
    /// of an answer gains one document. Returns the n-grams first seen in each document whose
    /// end is at most `record_limit` (what a Fluency walk of the first `record_limit`
    /// characters adds), documents numbered from 0 within this source.
    pub fn add_source(
        &mut self,
        source: usize,
        documents: &[Vec<char>],
        record_limit: usize,
    ) -> Result<Vec<FirstSeen>, TableError> {
        if source >= self.num_sources {
            return Err(TableError::TooManySources(source + 1));
        }
        let first_stamp = self.documents_added + 1;
        self.documents_added = u32::try_from(documents.len())
            .ok()
            .and_then(|n| self.documents_added.checked_add(n))
            .ok_or(TableError::TooManyDocuments { source })?;
        // node[i] of a document: the node of its substring starting at i, of the current length
        // minus one (updated in place, level after level).
        let mut nodes: Vec<Vec<u32>> = documents.iter().map(|d| vec![0; d.len()]).collect();
        let mut first_seen = Vec::new();
        for length in 1..=MAX_N {
            let level = &mut self.levels[length - 1];
            for (document, (text, nodes)) in documents.iter().zip(nodes.iter_mut()).enumerate() {
                let stamp = first_stamp + document as u32;
                let starts = (text.len() + 1).saturating_sub(length);
                // Positions are independent within a level: in batches, first start loading
                // every index slot, then every node's counts, so cache misses overlap.
                for batch_start in (0..starts).step_by(PREFETCH_BATCH) {
                    let batch = batch_start..(batch_start + PREFETCH_BATCH).min(starts);
                    for start in batch.clone() {
                        let key = level_key(length, nodes, text, start);
                        prefetch(&level.index[level.home(key)]);
                    }
                    for start in batch.clone() {
                        let node = level.get_or_insert(level_key(length, nodes, text, start))?;
                        nodes[start] = node;
                        prefetch(&level.nodes[node as usize]);
                    }
                    for start in batch {
                        let node = nodes[start];
                        let state = &mut level.nodes[node as usize];
                        if state.last_document == stamp {
                            continue;
                        }
                        state.last_document = stamp;
                        state.counts[source] = state.counts[source]
                            .checked_add(1)
                            .ok_or(TableError::TooManyDocuments { source })?;
                        let end = start + length;
                        if end <= record_limit {
                            first_seen.push(FirstSeen {
                                document: document as u32,
                                end: end as u16,
                                length: length as u8,
                                node,
                            });
                        }
                    }
                }
            }
        }
        Ok(first_seen)
    }

    /// The count of a node (of the given n-gram length) for a source, while building.
    #[inline]
    pub fn count(&self, length: u8, node: u32, source: usize) -> u16 {
        self.levels[length as usize - 1].nodes[node as usize].counts[source]
    }

    pub fn num_nodes(&self) -> usize {
        self.levels.iter().map(|level| level.node_keys.len()).sum()
    }

    /// The read-only table, sized for a load factor of about 0.7. Keys are rewritten from
    /// build-time node ids to final slots, shorter n-grams (the parents) first.
    pub fn freeze(self) -> Result<NgramTable, TableError> {
        let num_nodes = self.num_nodes();
        let capacity = (num_nodes * 10 / 7).max(16);
        if capacity >= (u32::MAX - 1) as usize {
            return Err(TableError::TooManyNodes);
        }
        let mut table = NgramTable {
            slots: vec![EMPTY_SLOT; capacity],
            num_sources: self.num_sources,
            num_nodes,
        };
        let code_mask = (1u64 << CODE_POINT_BITS) - 1;
        let mut parent_codes: Vec<NodeCode> = Vec::new();
        for level in &self.levels {
            let mut codes = Vec::with_capacity(level.node_keys.len());
            for (node, &key) in level.node_keys.iter().enumerate() {
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
                table.slots[slot] = Slot {
                    key,
                    frequencies: level.nodes[node].counts,
                };
                codes.push(slot as NodeCode + 1);
            }
            parent_codes = codes;
        }
        Ok(table)
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
        for (source, answers) in sources.iter().enumerate() {
            let documents: Vec<Vec<char>> = answers.iter().map(|a| chars(a)).collect();
            builder.add_source(source, &documents, 0).unwrap();
        }
        builder.freeze().unwrap()
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
        let first_seen = builder.add_source(0, &[chars("abab")], 3).unwrap();
        // l=1: a; l=2: b, ab; l=3: ba, aba (a is already counted); l=4 is past the limit.
        let mut ends: Vec<(u16, u8)> = first_seen.iter().map(|f| (f.end, f.length)).collect();
        ends.sort();
        assert_eq!(ends, vec![(1, 1), (2, 1), (2, 2), (3, 2), (3, 3)]);
    }

    #[test]
    fn rejects_bad_source_counts() {
        assert_eq!(
            TableBuilder::new(0).err(),
            Some(TableError::TooManySources(0))
        );
        assert_eq!(
            TableBuilder::new(5).err(),
            Some(TableError::TooManySources(5))
        );
    }
}
