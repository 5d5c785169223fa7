//! Character n-gram document-frequency tables, stored as a trie inside one hash table
//! (built by `ngram_build`).
//!
//! Every distinct n-gram (n = 1..=MAX_N) of the reference answers is a node whose key is
//! (parent node, last code point): the n-gram `g + c` is found from the node of `g` in one
//! probe. Keys are exact (no hashing of the n-gram text), so lookups never collide, and a walk
//! over an answer extends the n-grams ending at the previous character by one probe each.
//!
//! Most n-grams occur only once in all the reference answers.
//! Such an n-gram's longer n-grams are the continuation of the one text it occurs in, so only
//! the first of each such chain is stored (a *chain head*, holding where it occurs); a walk
//! extends a chain by comparing the next character of the reference text. The table stays
//! much smaller, which keeps one question's table in the CPU caches while its answers
//! are scored.

use crate::common::page_buffer::PageBuffer;
use crate::common::prefetch::{prefetch, PREFETCH_DISTANCE};
pub use crate::pfgen::spec::MAX_N;

/// Sources sharing one table (their document frequencies sit side by side in a slot).
pub const MAX_SOURCES: usize = 3;

const EMPTY: u64 = u64::MAX;
/// Slots allocated past the home slots for the ends of the clusters.
const CLUSTER_END_ROOM: usize = 64;
const CODE_POINT_BITS: u32 = 21;
/// Fibonacci hashing's multiplier, 2^64 / phi.
pub(crate) const HASH_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
/// Separates the reference answers in the text: no character has this value.
pub(crate) const SEPARATOR: u32 = u32::MAX;
/// Slot values with this bit are chain heads: `CHAIN | source << 32 | position`; the others
/// hold the document frequencies of the sources in lanes of LANE_BITS bits.
pub(crate) const CHAIN: u64 = 1 << 63;
/// Lanes wide enough to add up the frequencies (at most u16::MAX each) of the MAX_N n-grams
/// ending at one character without carrying into the next lane.
pub const LANE_BITS: u32 = 21;
pub const LANE_MASK: u64 = (1 << LANE_BITS) - 1;

/// An n-gram found in the table: a stored node (`code` = its slot + 1; 0 is the root, the
/// empty n-gram) or a position in a chain (`code` = CHAIN | source << 32 | start of its only
/// occurrence), with its document frequencies packed in lanes (`lanes`), so that counting it
/// reads no memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    code: u64,
    pub lanes: u64,
}

pub const ROOT: Node = Node { code: 0, lanes: 0 };

impl Node {
    #[inline]
    fn is_chain(self) -> bool {
        self.code & CHAIN != 0
    }

    #[inline]
    fn position(self) -> usize {
        self.code as u32 as usize
    }

    /// Document frequencies, one per source of the table (unused lanes hold 0).
    #[inline]
    pub fn frequencies(self) -> [u16; MAX_SOURCES] {
        unpack(self.lanes)
    }
}

/// The lanes of a packed value (each at most u16::MAX in a single node's value).
#[inline]
pub fn unpack(lanes: u64) -> [u16; MAX_SOURCES] {
    std::array::from_fn(|lane| ((lanes >> (LANE_BITS * lane as u32)) & LANE_MASK) as u16)
}

#[inline]
fn node_key(parent: u64, c: char) -> u64 {
    (parent << CODE_POINT_BITS) | c as u64
}

/// One slot: the key and the node's value share 16 bytes, so a successful probe costs one
/// memory access.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct Slot {
    key: u64,
    value: u64,
}

const EMPTY_SLOT: Slot = Slot {
    key: EMPTY,
    value: 0,
};

/// A finished, read-only table: open addressing with linear probing; the slot of a stored
/// node is its identity. Probes run forwards without wrapping around: keys hash to the first
/// `home_slots` slots, and the slots after them hold the ends of the clusters and at least
/// one empty slot, where every probe stops.
pub struct NgramTable {
    slots: PageBuffer<Slot>,
    home_slots: usize,
    /// The reference answers, one after another, each followed by SEPARATOR.
    text: Vec<u32>,
    num_sources: usize,
    num_nodes: usize,
}

impl NgramTable {
    pub fn num_sources(&self) -> usize {
        self.num_sources
    }

    /// Stored nodes (chain heads included, the rest of the chains not).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// The reference answers, one after another, each followed by SEPARATOR.
    pub(crate) fn text(&self) -> &[u32] {
        &self.text
    }

    /// Bytes held by the table and its text.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>() + self.text.len() * 4
    }

    /// The table's memory and its sizes (`home_slots`, `num_sources`, `num_nodes`), for
    /// `table_file`.
    pub(crate) fn parts(&self) -> (&[Slot], &[u32], [usize; 3]) {
        (
            &self.slots,
            &self.text,
            [self.home_slots, self.num_sources, self.num_nodes],
        )
    }

    /// A table from `parts`, if they fit together: probes end at the last slot, which is
    /// empty; codes and positions fit in u32.
    pub(crate) fn from_parts(
        slots: PageBuffer<Slot>,
        text: Vec<u32>,
        [home_slots, num_sources, num_nodes]: [usize; 3],
    ) -> Option<NgramTable> {
        let consistent = (1..=MAX_SOURCES).contains(&num_sources)
            && home_slots < slots.len()
            && slots.len() < u32::MAX as usize
            && slots.last().is_some_and(|slot| slot.key == EMPTY)
            && num_nodes < slots.len();
        consistent.then_some(NgramTable {
            slots,
            home_slots,
            text,
            num_sources,
            num_nodes,
        })
    }

    #[inline]
    fn home_slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the high 32 bits of key * 2^64/phi, scaled to the home slots
        // (fewer than 2^32, see `freeze`).
        let spread = key.wrapping_mul(HASH_MULTIPLIER) >> 32;
        ((spread * self.home_slots as u64) >> 32) as usize
    }

    /// The n-gram `parent + c`, if a reference answer contains it; `length` is the length of
    /// `parent`'s n-gram (0 for the root).
    #[inline]
    pub fn child(&self, parent: Node, length: usize, c: char) -> Option<Node> {
        // The probe starts where `prefetch_child` says (its prefetch, just before the read,
        // costs nothing).
        let home = self.prefetch_child(parent, length, c);
        self.child_from(parent, length, c, home)
    }

    /// Asks the caches for what `child(parent, length, c)` reads first, and returns the slot
    /// its probe starts from (for `child_from`).
    #[inline]
    pub(crate) fn prefetch_child(&self, parent: Node, length: usize, c: char) -> usize {
        if parent.is_chain() {
            if let Some(next) = self.text.get(parent.position() + length) {
                prefetch(next);
            }
            0
        } else {
            let home = self.home_slot(node_key(parent.code, c));
            if let Some(slot) = self.slots.get(home) {
                prefetch(slot);
            }
            home
        }
    }

    /// `child`, its probe starting at `home` (from `prefetch_child`).
    #[inline]
    pub(crate) fn child_from(
        &self,
        parent: Node,
        length: usize,
        c: char,
        home: usize,
    ) -> Option<Node> {
        if parent.is_chain() {
            // The text says what follows the only occurrence (SEPARATOR at its end).
            return (self.text[parent.position() + length] == c as u32).then_some(parent);
        }
        let key = node_key(parent.code, c);
        let mut slot = home;
        loop {
            let stored = self.slots[slot];
            if stored.key == key {
                let source = (stored.value >> 32) & 0xff;
                return Some(if stored.value & CHAIN != 0 {
                    Node {
                        code: stored.value,
                        lanes: 1 << (LANE_BITS as u64 * source),
                    }
                } else {
                    Node {
                        code: slot as u64 + 1,
                        lanes: stored.value,
                    }
                });
            }
            if stored.key == EMPTY {
                return None;
            }
            slot += 1;
        }
    }

    /// The node of a whole n-gram (1..=MAX_N characters), if present.
    pub fn find(&self, gram: &[char]) -> Option<Node> {
        if gram.is_empty() || gram.len() > MAX_N {
            return None;
        }
        let mut node = ROOT;
        for (length, &c) in gram.iter().enumerate() {
            node = self.child(node, length, c)?;
        }
        Some(node)
    }
}

/// A node as `freeze` places it, its parent given by its rank in the placement order.
struct Placed {
    parent_rank: u32,
    c: char,
    value: u64,
}

/// A node of the table being built (by `ngram_build`): its parent (0: the root, else 1 + the parent's index among
/// the nodes one character shorter), its last character, and its slot value (packed document
/// frequencies, or CHAIN | source << 32 | position for a chain head).
pub(crate) struct BuildNode {
    pub parent: u32,
    pub c: char,
    pub value: u64,
}

const NO_PARENT: u32 = u32::MAX;

/// Numbers of reference answers above this are one class of the placement order.
const MAX_ORDERED_ANSWERS: usize = 4095;

/// The nodes of all lengths by falling number of reference answers holding them (summed over
/// the sources; 1 for a chain head), shorter n-grams first among equals. A node's prefix (its
/// parent) is in at least as many answers, so it comes first. A counting sort.
fn placement_order(levels: Vec<Vec<BuildNode>>) -> Vec<Placed> {
    // The class of a node: MAX_ORDERED_ANSWERS - its number of answers (capped).
    let class = |node: &BuildNode| -> usize {
        // (A select, not a branch: about half the nodes are chain heads, in no pattern.)
        let summed: usize = unpack(node.value).iter().map(|&f| f as usize).sum();
        let answers = if node.value & CHAIN != 0 { 1 } else { summed };
        MAX_ORDERED_ANSWERS - answers.min(MAX_ORDERED_ANSWERS)
    };
    // starts[class]: the next rank of that class.
    let mut starts = vec![0u32; MAX_ORDERED_ANSWERS + 2];
    for node in levels.iter().flatten() {
        starts[class(node) + 1] += 1;
    }
    for i in 0..=MAX_ORDERED_ANSWERS {
        starts[i + 1] += starts[i];
    }
    let num_nodes = starts[MAX_ORDERED_ANSWERS + 1] as usize;
    // Placeholders: each rank is written once below.
    let mut order: Vec<Placed> = Vec::with_capacity(num_nodes);
    order.resize_with(num_nodes, || Placed {
        parent_rank: NO_PARENT,
        c: '\0',
        value: 0,
    });
    // The ranks of the nodes one character shorter, by build id - 1.
    let mut parent_ranks: Vec<u32> = Vec::new();
    for nodes in levels {
        let mut ranks = Vec::with_capacity(nodes.len());
        for node in &nodes {
            let start = &mut starts[class(node)];
            let rank = *start;
            *start += 1;
            order[rank as usize] = Placed {
                parent_rank: match node.parent {
                    0 => NO_PARENT,
                    parent => parent_ranks[parent as usize - 1],
                },
                c: node.c,
                value: node.value,
            };
            ranks.push(rank);
        }
        parent_ranks = ranks;
    }
    order
}

/// Why a table cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableError {
    TooManySources(usize),
    TooManyDocuments { source: usize },
    TooManyNodes,
    TooManyCharacters,
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
            TableError::TooManyCharacters => write!(
                f,
                "more than {} distinct characters in one question's reference answers",
                u16::MAX - 1
            ),
        }
    }
}

impl std::error::Error for TableError {}

impl NgramTable {
    /// The read-only table of the nodes of each length (`levels[n - 1]`), sized for a load
    /// factor of about 0.5. Keys are rewritten from build-time ids to final slots, parents
    /// first.
    ///
    /// Why about 0.5: a walk probes the table several times per character, and with linear
    /// probing a lower load factor means fewer slots read per probe, above all for absent
    /// n-grams; the cost is memory (docs/performance.md has the trade-off measured).
    ///
    /// Which nodes find their home slot free depends on the order of placement: the nodes in
    /// the most reference answers, which walks meet most, go first (see `placement_order`), so
    /// that the probes walks make most often read one slot.
    pub(crate) fn freeze(
        levels: Vec<Vec<BuildNode>>,
        text: Vec<u32>,
        num_sources: usize,
    ) -> Result<NgramTable, TableError> {
        let num_nodes: usize = levels.iter().map(Vec::len).sum();
        let home_slots = (num_nodes * 2).max(16);
        // Codes (slot + 1) and chain positions are u32 (with room for the clusters' ends).
        if home_slots >= u32::MAX as usize / 2 {
            return Err(TableError::TooManyNodes);
        }
        // Before the slots: the levels are dropped as the order is made (less memory at once).
        let order = placement_order(levels);
        // Room for the clusters' ends past the home slots (a few slots) without growing.
        let slots = PageBuffer::filled(
            EMPTY_SLOT,
            home_slots + 1,
            home_slots + 1 + CLUSTER_END_ROOM,
        );
        let mut table = NgramTable {
            slots,
            home_slots,
            text,
            num_sources,
            num_nodes,
        };
        // codes[r]: the code (slot + 1) of the node of rank r in `order`, once placed.
        let mut codes: Vec<u32> = Vec::with_capacity(order.len());
        let key_of = |codes: &[u32], node: &Placed| {
            let parent = match node.parent_rank {
                NO_PARENT => ROOT.code,
                // Not placed yet only for a node prefetched ahead: a harmless wrong address.
                rank => codes.get(rank as usize).map_or(0, |&code| code as u64),
            };
            node_key(parent, node.c)
        };
        for (rank, node) in order.iter().enumerate() {
            if let Some(ahead) = order.get(rank + PREFETCH_DISTANCE) {
                prefetch(&table.slots[table.home_slot(key_of(&codes, ahead))]);
            }
            let key = key_of(&codes, node);
            let home = table.home_slot(key);
            // The first step without a branch: whether the home slot is taken is a toss-up.
            let mut slot = home + usize::from(table.slots[home].key != EMPTY);
            while table.slots[slot].key != EMPTY {
                slot += 1;
            }
            // The last slot stays empty.
            if slot + 1 == table.slots.len() {
                table.slots.push(EMPTY_SLOT);
            }
            table.slots[slot] = Slot {
                key,
                value: node.value,
            };
            codes.push(slot as u32 + 1);
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_placed_by_falling_answers_parents_first() {
        let node = |parent: u32, c: char, value: u64| BuildNode { parent, c, value };
        let chain_head = CHAIN | 7;
        let levels = vec![
            // a (2 answers), b (5), c (1, a chain head)
            vec![node(0, 'a', 2), node(0, 'b', 5), node(0, 'c', chain_head)],
            // ab (2 answers, as many as its parent a), ba (3 + 1 in two sources)
            vec![node(1, 'b', 2), node(2, 'a', 3 | 1 << LANE_BITS)],
            // bab (a chain head)
            vec![node(2, 'b', chain_head)],
        ];
        let order = placement_order(levels);
        let placed: Vec<(char, u32)> = order.iter().map(|p| (p.c, p.parent_rank)).collect();
        // b, ba (after its parent b), a, ab (after a), then the chain heads c and bab.
        assert_eq!(
            placed,
            [
                ('b', NO_PARENT),
                ('a', 0),
                ('a', NO_PARENT),
                ('b', 2),
                ('c', NO_PARENT),
                ('b', 1)
            ]
        );
    }

    #[test]
    fn packed_lanes_round_trip() {
        let lanes = 7 | 65535 << LANE_BITS | 1 << (2 * LANE_BITS);
        assert_eq!(unpack(lanes), [7, 65535, 1]);
    }
}
