//! The rare n-gram filter of reference-set construction: which candidates contain a character
//! n-gram that fewer than `min_count` candidates contain (document frequency, not occurrences).
//! Exact, in bounded memory, for tens of millions of candidates.
//!
//! The scheme:
//! * Characters get dense ranks in the order they are first seen (one question's candidates use
//!   a few thousand distinct characters). Threads rank shares of a chunk of candidates with the
//!   ranks known so far; characters new to the chunk are then ranked in order of appearance. An n-gram whose characters all have ranks below
//!   2^`narrow_bits` (12 bits for n = 5) packs into a u64, a *narrow* key, stored mixed by a
//!   bijection of u64 so that it serves as its own hash. Any other n-gram packs its n ranks
//!   (21 bits each, as code points do) into a *wide* 105-bit key. Both packings are injective
//!   and an n-gram is narrow or wide by its characters alone, so every n-gram has exactly one
//!   key: no hash collision can merge two n-grams.
//! * A key's hash picks one of `NUM_PARTITIONS` partitions and a slot in that partition's hash
//!   table (open addressing). An entry holds the n-gram's count of distinct candidates,
//!   saturating at `min_count`, and the first `min_count - 1` of those candidates. Candidates are
//!   numbered in the order added, so a candidate repeating an n-gram is the entry's last member:
//!   one comparison keeps the count a document frequency.
//! * Candidates are counted in chunks, in two parallel passes. First each thread lists the
//!   n-grams of its share of the chunk by partition. Then each thread takes a range
//!   of partitions and applies their lists, the first thread's first, to the partitions' tables:
//!   candidates arrive in order, no locks are needed, and one table at a time is probed, its
//!   slots prefetched `PREFETCH_DISTANCE` n-grams ahead so that the probes' memory accesses
//!   overlap (probing all tables in text order scatters the accesses over every table).
//! * The texts stay in memory for `texts`. When the tables and texts reach the memory budget,
//!   the texts are appended to a text file and the tables, entry by entry, to one spill file per
//!   partition, and both are freed. `finish` takes each partition alone: it re-inserts the
//!   spilled entries and the table's own, adding counts (the parts hold disjoint ranges of
//!   candidates, so counts add up and members never repeat), and every n-gram left below
//!   `min_count` marks its members rare.
//!
//! Memory is the budget plus one merged partition per thread, plus 12 bytes per candidate (text
//! offset and length), whatever the number of candidates; disk holds the texts and at most one
//! entry per n-gram occurrence, far less when n-grams repeat.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::common::json_lines::utf8_char;
use crate::common::prefetch::{prefetch, PREFETCH_DISTANCE};

/// The longest n-gram: 5 ranks of 21 bits fill the 105 bits of a wide key.
pub const MAX_N: usize = 5;
/// Ranks are below 2^21 (there are fewer distinct code points), as code points are.
const RANK_BITS: u32 = 21;
const PARTITION_BITS: u32 = 8;
const NUM_PARTITIONS: usize = 1 << PARTITION_BITS;
/// Tables start at this capacity (slots) and double at half full.
const MIN_CAPACITY: usize = 64;
/// Candidates are ranked and counted in chunks of about this many bytes of text, so that the
/// memory budget is checked often and a chunk's ranks and per-partition lists stay small.
const CHUNK_BYTES: usize = 16 << 20;
const IO_BUFFER: usize = 1 << 18;
/// Texts are kept in blocks growing up to this size (one growing buffer would copy itself
/// and overshoot the memory it needs by up to half).
const TEXT_BLOCK: usize = 16 << 20;
const FIRST_TEXT_BLOCK: usize = 64 << 10;
/// Character `c` has rank `rank_of[c] - 1`; 0 marks a character not seen yet.
const UNRANKED: u32 = 0;
const NUM_CODE_POINTS: usize = 0x11_0000;

/// What the counting saw, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RareNgramStats {
    /// n-gram occurrences counted (all positions of all candidates).
    pub occurrences: u64,
    /// Distinct n-grams.
    pub distinct: u64,
    /// Distinct n-grams contained in fewer than `min_count` candidates.
    pub rare: u64,
    /// Distinct characters of the candidates.
    pub alphabet: u64,
    /// Distinct n-grams with wide keys (holding a character ranked beyond the narrow limit).
    pub wide: u64,
    /// Bytes written to spill files, n-gram entries and texts.
    pub spilled_bytes: u64,
}

/// The outcome: per candidate, in the order added, whether it holds a rare n-gram, and its
/// length in code points.
pub struct RareNgramResult {
    pub rare: Vec<bool>,
    pub lengths: Vec<u32>,
    pub stats: RareNgramStats,
}

#[derive(Debug)]
pub enum RareNgramError {
    InvalidN(usize),
    InvalidMinCount,
    TooManyCandidates,
    /// A candidate (its index among those added) is not valid UTF-8.
    InvalidUtf8(usize),
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for RareNgramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RareNgramError::InvalidN(n) => write!(f, "n must be between 1 and {MAX_N}, got {n}"),
            RareNgramError::InvalidMinCount => write!(f, "min_count must be at least 1"),
            RareNgramError::TooManyCandidates => {
                write!(f, "more than {} candidates for one question", u32::MAX - 1)
            }
            RareNgramError::InvalidUtf8(index) => write!(f, "candidate {index} is not valid UTF-8"),
            RareNgramError::Io(path, error) => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for RareNgramError {}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> RareNgramError + '_ {
    move |error| RareNgramError::Io(path.to_path_buf(), error)
}

/// An n-gram key: hashed into a partition and a slot, written to and read from spill files.
trait NgramKey: Copy + Eq + Default + Send + Sync {
    const BYTES: usize;
    fn hash(self) -> u64;
    fn write(self, out: &mut Vec<u8>);
    fn read(bytes: &[u8]) -> Self;
}

/// splitmix64's finaliser: a bijection of u64 (xor-shifts and multiplications by odd
/// constants are each invertible) in which every input bit moves every output bit, so both the
/// top bits (partition) and the low bits (slot) are usable.
fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

fn read_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(word)
}

/// A narrow n-gram: its packed ranks, mixed (a bijection, so still exact), and its own hash.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
struct NarrowKey(u64);

impl NarrowKey {
    fn from_packed(packed: u64) -> NarrowKey {
        NarrowKey(mix64(packed))
    }
}

impl NgramKey for NarrowKey {
    const BYTES: usize = 8;
    fn hash(self) -> u64 {
        self.0
    }
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }
    fn read(bytes: &[u8]) -> Self {
        NarrowKey(read_u64(bytes))
    }
}

/// 105 bits of ranks as two words (a u128 would be 16-byte aligned and pad every entry).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
struct WideKey {
    high: u64,
    low: u64,
}

impl WideKey {
    fn from_ranks(ranks: &[u32]) -> WideKey {
        let key = ranks
            .iter()
            .fold(0u128, |key, &rank| (key << RANK_BITS) | u128::from(rank));
        WideKey {
            high: (key >> 64) as u64,
            low: key as u64,
        }
    }
}

impl NgramKey for WideKey {
    const BYTES: usize = 16;
    fn hash(self) -> u64 {
        mix64(self.low ^ mix64(self.high))
    }
    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.high.to_le_bytes());
        out.extend_from_slice(&self.low.to_le_bytes());
    }
    fn read(bytes: &[u8]) -> Self {
        WideKey {
            high: read_u64(bytes),
            low: read_u64(&bytes[8..]),
        }
    }
}

fn partition_of(hash: u64) -> usize {
    (hash >> (u64::BITS - PARTITION_BITS)) as usize
}
#[derive(Clone, Copy, Default)]
struct Entry<K> {
    key: K,
    /// Distinct candidates holding the n-gram, at most `min_count`; 0 marks an empty slot.
    count: u32,
    /// The first of them.
    first: u32,
}

/// One partition's n-grams of one kind: open addressing with linear probing. Members beyond
/// the first (only for `min_count` > 2) live in `more_members`, `min_count - 2` per slot.
struct NgramTable<K> {
    entries: Vec<Entry<K>>,
    more_members: Vec<u32>,
    len: usize,
}

impl<K: NgramKey> NgramTable<K> {
    fn new() -> Self {
        NgramTable {
            entries: Vec::new(),
            more_members: Vec::new(),
            len: 0,
        }
    }

    /// Asks the processor to load the home slot of `hash` into the cache, ahead of its probe
    /// (no effect on the outcome).
    fn prefetch(&self, hash: u64) {
        if let Some(entry) = self
            .entries
            .get(hash as usize & self.entries.len().wrapping_sub(1))
        {
            prefetch(entry);
        }
    }

    fn allocated_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry<K>>() + self.more_members.capacity() * 4
    }

    /// The slot holding `key`, or the empty slot where it goes; grows the table first if
    /// half full.
    fn slot(&mut self, key: K, hash: u64, min_count: u32) -> usize {
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow(min_count);
        }
        let mask = self.entries.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let entry = &self.entries[slot];
            if entry.count == 0 || entry.key == key {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    fn grow(&mut self, min_count: u32) {
        let capacity = (self.entries.len() * 2).max(MIN_CAPACITY);
        let extra = extra_members(min_count);
        let old_entries = std::mem::replace(&mut self.entries, vec![Entry::default(); capacity]);
        let old_members = std::mem::replace(&mut self.more_members, vec![0; capacity * extra]);
        let mask = capacity - 1;
        for (old_slot, entry) in old_entries.iter().enumerate() {
            if entry.count == 0 {
                continue;
            }
            let mut slot = entry.key.hash() as usize & mask;
            while self.entries[slot].count != 0 {
                slot = (slot + 1) & mask;
            }
            self.entries[slot] = *entry;
            self.more_members[slot * extra..(slot + 1) * extra]
                .copy_from_slice(&old_members[old_slot * extra..(old_slot + 1) * extra]);
        }
    }

    /// Counts one occurrence of `key` in `candidate` (candidates arrive in increasing order).
    fn add_occurrence(&mut self, key: K, hash: u64, candidate: u32, min_count: u32) {
        let slot = self.slot(key, hash, min_count);
        let extra = extra_members(min_count);
        let entry = &mut self.entries[slot];
        if entry.count == 0 {
            *entry = Entry {
                key,
                count: 1,
                first: candidate,
            };
            self.len += 1;
            return;
        }
        let count = entry.count;
        if count >= min_count {
            return;
        }
        let members = &mut self.more_members[slot * extra..(slot + 1) * extra];
        let last = if count == 1 {
            entry.first
        } else {
            members[count as usize - 2]
        };
        if last == candidate {
            return;
        }
        if count + 1 < min_count {
            members[count as usize - 1] = candidate;
        }
        entry.count = count + 1;
    }

    /// Adds an entry counted over other candidates than this table's: counts add up (at most
    /// `min_count`), members are appended while there is room.
    fn merge_entry(&mut self, key: K, count: u32, members: &[u32], min_count: u32) {
        let slot = self.slot(key, key.hash(), min_count);
        let extra = extra_members(min_count);
        let entry = &mut self.entries[slot];
        let kept = if entry.count == 0 {
            *entry = Entry {
                key,
                count: 0,
                first: members.first().copied().unwrap_or(0),
            };
            self.len += 1;
            0
        } else {
            entry.count
        };
        if kept >= min_count {
            return;
        }
        let total = kept.saturating_add(count).min(min_count);
        // Member i (0-based) is `first` for i = 0, else more_members[i - 1].
        let room = &mut self.more_members[slot * extra..(slot + 1) * extra];
        for (i, &member) in (kept as usize..total.min(min_count - 1) as usize).zip(members) {
            if i > 0 {
                room[i - 1] = member;
            }
        }
        entry.count = total;
    }

    /// The entry in `slot` with its members (those it keeps: all of them below `min_count`).
    fn members(&self, slot: usize, min_count: u32, out: &mut Vec<u32>) {
        let extra = extra_members(min_count);
        let entry = &self.entries[slot];
        let kept = entry.count.min(min_count - 1) as usize;
        out.clear();
        if kept > 0 {
            out.push(entry.first);
            out.extend_from_slice(&self.more_members[slot * extra..slot * extra + kept - 1]);
        }
    }

    /// Appends every entry to `path` (key, count, `min_count - 1` members) and empties the
    /// table, freeing its memory. Returns the bytes written.
    fn spill(&mut self, path: &Path, min_count: u32) -> io::Result<u64> {
        if self.len == 0 {
            *self = NgramTable::new();
            return Ok(0);
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut out = BufWriter::with_capacity(IO_BUFFER, file);
        let mut record = Vec::with_capacity(record_bytes::<K>(min_count));
        let mut members = Vec::new();
        let mut written = 0;
        for slot in 0..self.entries.len() {
            let entry = self.entries[slot];
            if entry.count == 0 {
                continue;
            }
            self.members(slot, min_count, &mut members);
            record.clear();
            entry.key.write(&mut record);
            record.extend_from_slice(&entry.count.to_le_bytes());
            members.resize(min_count as usize - 1, 0);
            for member in &members {
                record.extend_from_slice(&member.to_le_bytes());
            }
            out.write_all(&record)?;
            written += record.len() as u64;
        }
        out.flush()?;
        *self = NgramTable::new();
        Ok(written)
    }

    /// This table with the entries spilled to `path` merged in.
    fn merged_with_spill(self, path: &Path, min_count: u32) -> io::Result<Self> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(self),
            Err(error) => return Err(error),
        };
        let record_len = record_bytes::<K>(min_count);
        let records = file.metadata()?.len() as usize / record_len;
        let mut merged = NgramTable::new();
        let mut reader = BufReader::with_capacity(IO_BUFFER, file);
        let mut record = vec![0u8; record_len];
        let mut members = Vec::new();
        for _ in 0..records {
            reader.read_exact(&mut record)?;
            let key = K::read(&record);
            let count = read_u32(&record[K::BYTES..]);
            members.clear();
            members.extend(
                record[K::BYTES + 4..]
                    .chunks_exact(4)
                    .take(count.min(min_count - 1) as usize)
                    .map(read_u32),
            );
            merged.merge_entry(key, count, &members, min_count);
        }
        for slot in 0..self.entries.len() {
            let entry = self.entries[slot];
            if entry.count != 0 {
                self.members(slot, min_count, &mut members);
                merged.merge_entry(entry.key, entry.count, &members, min_count);
            }
        }
        Ok(merged)
    }

    /// Adds this table's distinct and rare n-grams to `count`, the members of rare ones to
    /// its candidates.
    fn collect_rare(&self, min_count: u32, count: &mut PartitionCount) {
        let mut members = Vec::new();
        for slot in 0..self.entries.len() {
            let entry = &self.entries[slot];
            if entry.count == 0 {
                continue;
            }
            count.distinct += 1;
            if entry.count < min_count {
                count.rare += 1;
                self.members(slot, min_count, &mut members);
                count.rare_candidates.extend_from_slice(&members);
            }
        }
    }
}

/// Members kept per entry beyond the first.
fn extra_members(min_count: u32) -> usize {
    min_count.saturating_sub(2) as usize
}

fn record_bytes<K: NgramKey>(min_count: u32) -> usize {
    K::BYTES + 4 + 4 * (min_count as usize - 1)
}

/// An n-gram occurrence waiting for its partition's turn.
#[derive(Clone, Copy)]
struct Pending<K> {
    key: K,
    candidate: u32,
}

/// One thread's n-gram occurrences of a chunk, by partition.
struct PendingLists {
    narrow: Vec<Vec<Pending<NarrowKey>>>,
    wide: Vec<Vec<Pending<WideKey>>>,
}

impl PendingLists {
    fn new() -> PendingLists {
        PendingLists {
            narrow: (0..NUM_PARTITIONS).map(|_| Vec::new()).collect(),
            wide: (0..NUM_PARTITIONS).map(|_| Vec::new()).collect(),
        }
    }

    fn allocated_bytes(&self) -> usize {
        let narrow: usize = self.narrow.iter().map(Vec::capacity).sum();
        let wide: usize = self.wide.iter().map(Vec::capacity).sum();
        narrow * std::mem::size_of::<Pending<NarrowKey>>()
            + wide * std::mem::size_of::<Pending<WideKey>>()
    }

    fn clear(&mut self) {
        self.narrow.iter_mut().for_each(Vec::clear);
        self.wide.iter_mut().for_each(Vec::clear);
    }
}

struct Partition {
    narrow: NgramTable<NarrowKey>,
    wide: NgramTable<WideKey>,
}

impl Partition {
    fn new() -> Partition {
        Partition {
            narrow: NgramTable::new(),
            wide: NgramTable::new(),
        }
    }

    fn allocated_bytes(&self) -> usize {
        self.narrow.allocated_bytes() + self.wide.allocated_bytes()
    }
}

#[derive(Default)]
struct PartitionCount {
    distinct: u64,
    rare: u64,
    wide: u64,
    rare_candidates: Vec<u32>,
}

/// A share of a chunk of candidates as ranks: candidate `first_index + i` is
/// `ranks[bounds[i]..bounds[i + 1]]`. Characters not ranked yet hold a placeholder and are
/// listed in `unseen` (position in `ranks`, character).
struct RankedShare {
    first_index: u32,
    ranks: Vec<u32>,
    bounds: Vec<usize>,
    unseen: Vec<(usize, u32)>,
}

/// Counts the n-grams of candidates added in batches; see the module documentation.
pub struct RareNgramCounter {
    n: usize,
    min_count: u32,
    /// Ranks below `1 << narrow_bits` pack n to a u64.
    narrow_bits: u32,
    dir: PathBuf,
    memory_budget: usize,
    partitions: Vec<Partition>,
    /// Per thread, reused from chunk to chunk.
    pending: Vec<PendingLists>,
    rank_of: Vec<u32>,
    alphabet: u32,
    texts: TextStore,
    lengths: Vec<u32>,
    stats: RareNgramStats,
}

impl RareNgramCounter {
    /// A counter of n-grams, marking those found in fewer than `min_count` candidates, spilling
    /// into `dir` (an existing, empty directory that the caller removes afterwards) when its
    /// tables and texts take more than `memory_budget` bytes.
    pub fn new(
        n: usize,
        min_count: u32,
        dir: &Path,
        memory_budget: usize,
    ) -> Result<Self, RareNgramError> {
        if n == 0 || n > MAX_N {
            return Err(RareNgramError::InvalidN(n));
        }
        if min_count == 0 {
            return Err(RareNgramError::InvalidMinCount);
        }
        Ok(RareNgramCounter {
            n,
            min_count,
            narrow_bits: (u64::BITS / n as u32).min(RANK_BITS),
            dir: dir.to_path_buf(),
            memory_budget,
            partitions: (0..NUM_PARTITIONS).map(|_| Partition::new()).collect(),
            pending: Vec::new(),
            // Zeroed memory: the pages of unused code points are never touched.
            rank_of: vec![UNRANKED; NUM_CODE_POINTS],
            alphabet: 0,
            texts: TextStore::new(dir.join("texts.bin")),
            lengths: Vec::new(),
            stats: RareNgramStats::default(),
        })
    }

    pub fn num_candidates(&self) -> usize {
        self.lengths.len()
    }

    /// Adds candidates, UTF-8 text (their indices continue those already added). On error,
    /// the candidates of the failing chunk are not added.
    pub fn add<S: AsRef<[u8]> + Sync>(&mut self, candidates: &[S]) -> Result<(), RareNgramError> {
        let mut start = 0;
        while start < candidates.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < candidates.len() && bytes < CHUNK_BYTES {
                bytes += candidates[end].as_ref().len();
                end += 1;
            }
            let shares = self.rank(&candidates[start..end])?;
            self.count(&shares);
            if self.buffered_bytes() > self.memory_budget {
                self.spill()?;
            }
            start = end;
        }
        Ok(())
    }

    /// Ranks the characters of a chunk of candidates, one share per thread, and keeps their
    /// texts and lengths.
    fn rank<S: AsRef<[u8]> + Sync>(
        &mut self,
        candidates: &[S],
    ) -> Result<Vec<RankedShare>, RareNgramError> {
        let first_index = self.lengths.len();
        candidate_index(first_index + candidates.len())?;
        let threads = rayon::current_num_threads().max(1);
        let splits = split_by_bytes(candidates, threads);
        let rank_of = &self.rank_of;
        let mut shares = splits
            .par_windows(2)
            .map(|share| rank_share(candidates, share[0]..share[1], first_index, rank_of))
            .collect::<Result<Vec<_>, RareNgramError>>()?;
        for share in &mut shares {
            for &(position, c) in &share.unseen {
                let slot = &mut self.rank_of[c as usize];
                if *slot == UNRANKED {
                    self.alphabet += 1;
                    *slot = self.alphabet;
                }
                share.ranks[position] = *slot - 1;
            }
            for bounds in share.bounds.windows(2) {
                let length = bounds[1] - bounds[0];
                self.lengths.push(u32::try_from(length).unwrap_or(u32::MAX));
                self.stats.occurrences += length.saturating_sub(self.n - 1) as u64;
            }
        }
        for candidate in candidates {
            self.texts.push(candidate.as_ref());
        }
        Ok(shares)
    }

    /// Counts the n-grams of a chunk's shares: lists them by partition, a thread per share,
    /// then applies the lists to the tables, each thread a range of partitions.
    fn count(&mut self, shares: &[RankedShare]) {
        self.pending.resize_with(shares.len(), PendingLists::new);
        let (n, narrow_bits) = (self.n, self.narrow_bits);
        self.pending
            .par_iter_mut()
            .zip(shares.par_iter())
            .for_each(|(lists, share)| list_ngrams(share, n, narrow_bits, lists));
        let min_count = self.min_count;
        let pending = &self.pending[..shares.len()];
        let per_thread = NUM_PARTITIONS.div_ceil(rayon::current_num_threads().max(1));
        self.partitions
            .par_chunks_mut(per_thread)
            .enumerate()
            .for_each(|(group, partitions)| {
                for (offset, partition) in partitions.iter_mut().enumerate() {
                    let index = group * per_thread + offset;
                    for lists in pending {
                        let list = &lists.narrow[index];
                        for (i, occurrence) in list.iter().enumerate() {
                            if let Some(ahead) = list.get(i + PREFETCH_DISTANCE) {
                                partition.narrow.prefetch(ahead.key.hash());
                            }
                            let key = occurrence.key;
                            let candidate = occurrence.candidate;
                            partition
                                .narrow
                                .add_occurrence(key, key.hash(), candidate, min_count);
                        }
                        for occurrence in &lists.wide[index] {
                            let key = occurrence.key;
                            let candidate = occurrence.candidate;
                            partition
                                .wide
                                .add_occurrence(key, key.hash(), candidate, min_count);
                        }
                    }
                }
            });
    }

    /// Memory held by the n-gram tables and the texts (what `spill` frees).
    pub fn buffered_bytes(&self) -> usize {
        let tables: usize = self.partitions.iter().map(Partition::allocated_bytes).sum();
        let pending: usize = self.pending.iter().map(PendingLists::allocated_bytes).sum();
        tables + pending + self.texts.allocated_bytes()
    }

    fn partition_path(&self, partition: usize, kind: &str) -> PathBuf {
        self.dir.join(format!("{kind}-{partition:03}.bin"))
    }

    /// Appends the n-gram tables and the texts to the spill files and frees them.
    pub fn spill(&mut self) -> Result<(), RareNgramError> {
        let min_count = self.min_count;
        for index in 0..NUM_PARTITIONS {
            let narrow_path = self.partition_path(index, "narrow");
            let wide_path = self.partition_path(index, "wide");
            let partition = &mut self.partitions[index];
            let narrow = partition.narrow.spill(&narrow_path, min_count);
            self.stats.spilled_bytes += narrow.map_err(io_error(&narrow_path))?;
            let wide = partition.wide.spill(&wide_path, min_count);
            self.stats.spilled_bytes += wide.map_err(io_error(&wide_path))?;
        }
        self.pending = Vec::new();
        let written = self.texts.spill();
        self.stats.spilled_bytes += written.map_err(io_error(&self.texts.path))?;
        Ok(())
    }

    /// Merges every partition with its spilled entries and marks the candidates holding an
    /// n-gram that fewer than `min_count` candidates contain. Texts stay readable with `texts`.
    pub fn finish(&mut self) -> Result<RareNgramResult, RareNgramError> {
        let min_count = self.min_count;
        let partitions = std::mem::take(&mut self.partitions);
        let paths: Vec<(PathBuf, PathBuf)> = (0..NUM_PARTITIONS)
            .map(|p| {
                (
                    self.partition_path(p, "narrow"),
                    self.partition_path(p, "wide"),
                )
            })
            .collect();
        let counted = partitions
            .into_par_iter()
            .zip(paths.par_iter())
            .map(|(partition, (narrow_path, wide_path))| {
                let mut count = PartitionCount::default();
                let narrow = partition
                    .narrow
                    .merged_with_spill(narrow_path, min_count)
                    .map_err(io_error(narrow_path))?;
                narrow.collect_rare(min_count, &mut count);
                drop(narrow);
                let wide = partition
                    .wide
                    .merged_with_spill(wide_path, min_count)
                    .map_err(io_error(wide_path))?;
                let distinct_narrow = count.distinct;
                wide.collect_rare(min_count, &mut count);
                count.wide = count.distinct - distinct_narrow;
                Ok(count)
            })
            .collect::<Result<Vec<_>, RareNgramError>>()?;
        self.partitions = (0..NUM_PARTITIONS).map(|_| Partition::new()).collect();
        let mut rare = vec![false; self.lengths.len()];
        let mut stats = self.stats.clone();
        stats.alphabet = u64::from(self.alphabet);
        for partition in counted {
            stats.distinct += partition.distinct;
            stats.rare += partition.rare;
            stats.wide += partition.wide;
            for index in partition.rare_candidates {
                if let Some(flag) = rare.get_mut(index as usize) {
                    *flag = true;
                }
            }
        }
        Ok(RareNgramResult {
            rare,
            lengths: self.lengths.clone(),
            stats,
        })
    }

    /// The texts of candidates `indices` (in that order), from memory or the text file.
    pub fn texts(&self, indices: &[usize]) -> Result<Vec<String>, RareNgramError> {
        let path = &self.texts.path;
        let mut file = None;
        let mut texts = Vec::with_capacity(indices.len());
        for &index in indices {
            let bytes = self.texts.get(index, &mut file).map_err(io_error(path))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                let error = io::Error::new(io::ErrorKind::InvalidData, "corrupt text file");
                RareNgramError::Io(path.clone(), error)
            })?;
            texts.push(text);
        }
        Ok(texts)
    }
}

/// The candidates' texts, in order: in memory, in blocks that no text straddles, until spilled
/// to the text file. Offsets count bytes as if all texts were one string.
struct TextStore {
    path: PathBuf,
    /// Where each text starts, and where the last one ends.
    offsets: Vec<u64>,
    /// Texts before this offset are in the file.
    file_bytes: u64,
    /// Blocks in memory, each with the offset it starts at.
    blocks: Vec<(u64, Vec<u8>)>,
}

impl TextStore {
    fn new(path: PathBuf) -> TextStore {
        TextStore {
            path,
            offsets: vec![0],
            file_bytes: 0,
            blocks: Vec::new(),
        }
    }

    fn end(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }

    fn push(&mut self, text: &[u8]) {
        let room = self
            .blocks
            .last()
            .map_or(0, |(_, block)| block.capacity() - block.len());
        if room < text.len() {
            let previous = self.blocks.last().map_or(0, |(_, block)| block.capacity());
            let capacity = (previous * 2).clamp(FIRST_TEXT_BLOCK, TEXT_BLOCK);
            let block = Vec::with_capacity(capacity.max(text.len()));
            self.blocks.push((self.end(), block));
        }
        if let Some((_, block)) = self.blocks.last_mut() {
            block.extend_from_slice(text);
        }
        self.offsets.push(self.end() + text.len() as u64);
    }

    fn allocated_bytes(&self) -> usize {
        self.blocks.iter().map(|(_, block)| block.capacity()).sum()
    }

    /// Appends the blocks to the text file and frees them; returns the bytes written.
    fn spill(&mut self) -> io::Result<u64> {
        if self.blocks.is_empty() {
            return Ok(0);
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        for (_, block) in &self.blocks {
            file.write_all(block)?;
        }
        let written = self.end() - self.file_bytes;
        self.file_bytes = self.end();
        self.blocks = Vec::new();
        Ok(written)
    }

    /// Text `index`, from its block or from the file (opened into `file` when first needed).
    fn get(&self, index: usize, file: &mut Option<File>) -> io::Result<Vec<u8>> {
        let (Some(&start), Some(&end)) = (self.offsets.get(index), self.offsets.get(index + 1))
        else {
            let count = self.offsets.len() - 1;
            let message = format!("no candidate {index} (there are {count})");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        };
        if start == end {
            return Ok(Vec::new());
        }
        if start >= self.file_bytes {
            let block = self.blocks.partition_point(|(first, _)| *first <= start);
            let text = block
                .checked_sub(1)
                .and_then(|block| self.blocks.get(block))
                .and_then(|(first, bytes)| {
                    let from = (start - first) as usize;
                    bytes.get(from..from + (end - start) as usize)
                });
            let missing = || io::Error::new(io::ErrorKind::InvalidData, "text not in memory");
            return text.map(<[u8]>::to_vec).ok_or_else(missing);
        }
        let file = match file {
            Some(file) => file,
            None => file.insert(File::open(&self.path)?),
        };
        let mut bytes = vec![0; (end - start) as usize];
        file.read_exact_at(&mut bytes, start)?;
        Ok(bytes)
    }
}

/// `index` as a candidate index, if there can be that many candidates.
fn candidate_index(index: usize) -> Result<u32, RareNgramError> {
    u32::try_from(index)
        .ok()
        .filter(|&index| index < u32::MAX)
        .ok_or(RareNgramError::TooManyCandidates)
}

/// Candidate boundaries splitting `candidates` into `parts` shares of about equal bytes.
fn split_by_bytes<S: AsRef<[u8]>>(candidates: &[S], parts: usize) -> Vec<usize> {
    let total: usize = candidates.iter().map(|c| c.as_ref().len()).sum();
    let mut splits = vec![0];
    let mut bytes = 0;
    for (index, candidate) in candidates.iter().enumerate() {
        if splits.len() < parts && bytes >= total * splits.len() / parts {
            splits.push(index);
        }
        bytes += candidate.as_ref().len();
    }
    splits.resize(parts, candidates.len());
    splits.push(candidates.len());
    splits
}

/// Decodes and ranks candidates `range` (numbered from `first_index`) with the ranks known.
fn rank_share<S: AsRef<[u8]>>(
    candidates: &[S],
    range: std::ops::Range<usize>,
    first_index: usize,
    rank_of: &[u32],
) -> Result<RankedShare, RareNgramError> {
    let mut share = RankedShare {
        first_index: (first_index + range.start) as u32,
        ranks: Vec::new(),
        bounds: Vec::with_capacity(range.len() + 1),
        unseen: Vec::new(),
    };
    share.bounds.push(0);
    for index in range {
        let bytes = candidates[index].as_ref();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            let (c, length) = if byte < 0x80 {
                (u32::from(byte), 1)
            } else {
                utf8_char(&bytes[at..]).ok_or(RareNgramError::InvalidUtf8(first_index + index))?
            };
            let rank = rank_of[c as usize];
            if rank == UNRANKED {
                share.unseen.push((share.ranks.len(), c));
            }
            share.ranks.push(rank.wrapping_sub(1));
            at += length;
        }
        share.bounds.push(share.ranks.len());
    }
    Ok(share)
}

/// Lists the n-grams of a share by partition, in candidate order.
fn list_ngrams(share: &RankedShare, n: usize, narrow_bits: u32, lists: &mut PendingLists) {
    lists.clear();
    let narrow_limit = 1u32 << narrow_bits;
    let narrow_mask = u64::MAX >> (u64::BITS - narrow_bits * n as u32);
    for (i, bounds) in share.bounds.windows(2).enumerate() {
        let candidate = share.first_index + i as u32;
        let ranks = &share.ranks[bounds[0]..bounds[1]];
        let mut packed = 0u64;
        // Windows ending before `narrow_from` hold a character ranked too far for a narrow key.
        // A wide rank's extra bits leave `packed` once n more characters are shifted in.
        let mut narrow_from = 0;
        for (end, &rank) in ranks.iter().enumerate() {
            packed = ((packed << narrow_bits) | u64::from(rank)) & narrow_mask;
            if rank >= narrow_limit {
                narrow_from = end + n;
            }
            if end + 1 < n {
                continue;
            }
            if end >= narrow_from {
                let key = NarrowKey::from_packed(packed);
                lists.narrow[partition_of(key.hash())].push(Pending { key, candidate });
            } else {
                let key = WideKey::from_ranks(&ranks[end + 1 - n..=end]);
                lists.wide[partition_of(key.hash())].push(Pending { key, candidate });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_dir::TestDir;
    use std::collections::{HashMap, HashSet};

    /// The definition, directly: document frequencies of character n-grams in a hash map.
    fn naive(candidates: &[String], n: usize, min_count: u32) -> Vec<bool> {
        let grams = |text: &str| -> HashSet<Vec<char>> {
            let chars: Vec<char> = text.chars().collect();
            chars.windows(n).map(|w| w.to_vec()).collect()
        };
        let mut df: HashMap<Vec<char>, u32> = HashMap::new();
        for candidate in candidates {
            for gram in grams(candidate) {
                *df.entry(gram).or_default() += 1;
            }
        }
        candidates
            .iter()
            .map(|c| grams(c).iter().any(|g| df[g] < min_count))
            .collect()
    }

    fn distinct_ngrams(candidates: &[String], n: usize) -> u64 {
        let mut all = HashSet::new();
        for candidate in candidates {
            let chars: Vec<char> = candidate.chars().collect();
            all.extend(chars.windows(n).map(|w| w.to_vec()));
        }
        all.len() as u64
    }

    /// Distinct n-grams found in two candidates or more that hold a character whose rank (in
    /// order of first appearance) is `narrow_limit` or more.
    fn recurring_wide_ngrams(candidates: &[String], n: usize, narrow_limit: usize) -> usize {
        let mut rank: HashMap<char, usize> = HashMap::new();
        let mut df: HashMap<Vec<char>, u32> = HashMap::new();
        for candidate in candidates {
            let chars: Vec<char> = candidate.chars().collect();
            for &c in &chars {
                let next = rank.len();
                rank.entry(c).or_insert(next);
            }
            let grams: HashSet<&[char]> = chars.windows(n).collect();
            for gram in grams {
                *df.entry(gram.to_vec()).or_default() += 1;
            }
        }
        df.iter()
            .filter(|(gram, &count)| count >= 2 && gram.iter().any(|c| rank[c] >= narrow_limit))
            .count()
    }

    fn run(candidates: &[String], n: usize, min_count: u32, budget: usize) -> RareNgramResult {
        run_in_batches(candidates, n, min_count, budget, 7)
    }

    fn run_in_batches(
        candidates: &[String],
        n: usize,
        min_count: u32,
        budget: usize,
        batch_size: usize,
    ) -> RareNgramResult {
        let dir = TestDir::new(&format!("rare-{n}-{min_count}-{budget}-{batch_size}"));
        let mut counter = RareNgramCounter::new(n, min_count, dir.path(), budget).expect("counter");
        for batch in candidates.chunks(batch_size) {
            counter.add(batch).expect("add");
        }
        let result = counter.finish().expect("finish");
        let all: Vec<usize> = (0..candidates.len()).rev().collect();
        let texts = counter.texts(&all).expect("texts");
        let expected: Vec<String> = candidates.iter().rev().cloned().collect();
        assert_eq!(texts, expected);
        result
    }

    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % bound
        }
    }

    /// Deterministic pseudo-random candidates over a small alphabet, with repeats.
    fn small_alphabet_candidates(count: usize) -> Vec<String> {
        let alphabet: Vec<char> = "あいうえおかきくけこ漢字😀ab".chars().collect();
        let mut random = Random(12345);
        (0..count)
            .map(|_| {
                let length = random.below(12);
                (0..length)
                    .map(|_| alphabet[random.below(4).min(random.below(alphabet.len()))])
                    .collect()
            })
            .collect()
    }

    /// Candidates cut from one long text over `alphabet_size` characters (kanji, then astral
    /// characters), with a character changed now and then: their n-grams recur, some in one
    /// candidate only, and beyond 4,096 characters many hold a character too rare for a narrow
    /// 5-gram key.
    fn large_alphabet_candidates(count: usize, alphabet_size: usize) -> Vec<String> {
        let alphabet: Vec<char> = (0x4E00..0x9FFF)
            .chain(0x20000..0x2A6DF)
            .filter_map(char::from_u32)
            .take(alphabet_size)
            .collect();
        let mut random = Random(99);
        let source: Vec<char> = (0..alphabet_size * 3)
            .map(|i| {
                if i < alphabet_size {
                    alphabet[i]
                } else {
                    alphabet[random.below(alphabet_size)]
                }
            })
            .collect();
        (0..count)
            .map(|_| {
                let start = random.below(source.len() - 40);
                let mut chars = source[start..start + random.below(40)].to_vec();
                if !chars.is_empty() && random.below(3) == 0 {
                    let at = random.below(chars.len());
                    chars[at] = alphabet[random.below(alphabet_size)];
                }
                chars.into_iter().collect()
            })
            .collect()
    }

    #[test]
    fn matches_the_definition_in_memory_and_spilled() {
        let candidates = small_alphabet_candidates(400);
        for n in 1..=MAX_N {
            for min_count in [1, 2, 3, 4] {
                let expected = naive(&candidates, n, min_count);
                // Budgets: spill after every batch, now and then (the tables at `finish` merge
                // with spilled entries), and never.
                for budget in [0, 200 << 10, 1 << 30] {
                    let result = run(&candidates, n, min_count, budget);
                    assert_eq!(result.rare, expected, "n={n} min_count={min_count}");
                    assert_eq!(result.stats.distinct, distinct_ngrams(&candidates, n));
                    assert_eq!(result.stats.wide, 0);
                }
            }
        }
    }

    #[test]
    fn characters_beyond_the_narrow_limit_take_wide_keys() {
        // 6,000 characters: ranks past 4,095 make wide 5-grams; 4-grams stay narrow (16 bits).
        let candidates = large_alphabet_candidates(3000, 6000);
        let alphabet: HashSet<char> = candidates.iter().flat_map(|c| c.chars()).collect();
        assert!(alphabet.len() > 5000);
        for n in [4, 5] {
            for min_count in [2, 3] {
                let expected = naive(&candidates, n, min_count);
                for budget in [0, 256 << 10, 1 << 30] {
                    let result = run(&candidates, n, min_count, budget);
                    assert_eq!(result.rare, expected, "n={n} min_count={min_count}");
                    assert_eq!(result.stats.distinct, distinct_ngrams(&candidates, n));
                    assert_eq!(result.stats.spilled_bytes > 0, budget < 1 << 30);
                    assert_eq!(result.stats.alphabet, alphabet.len() as u64);
                    if n == 5 {
                        // Both kinds of key, and wide ones in several candidates.
                        assert!(result.stats.wide > 1000, "{:?}", result.stats);
                        assert!(result.stats.distinct > result.stats.wide + 1000);
                        assert!(recurring_wide_ngrams(&candidates, n, 4096) > 1000);
                    } else {
                        assert_eq!(result.stats.wide, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn any_number_of_threads_gives_the_same_ranks_and_counts() {
        // Whole batches: chunks of several shares, new characters in every share.
        let candidates = large_alphabet_candidates(3000, 6000);
        let expected = naive(&candidates, 5, 2);
        let mut outcomes = Vec::new();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("thread pool");
            let result = pool.install(|| run_in_batches(&candidates, 5, 2, 1 << 30, 1000));
            assert_eq!(result.rare, expected, "{threads} threads");
            outcomes.push(result.stats);
        }
        assert!(outcomes[0].wide > 1000);
        assert!(outcomes.iter().all(|stats| *stats == outcomes[0]));
    }

    #[test]
    fn invalid_utf8_is_an_error_and_adds_nothing() {
        let dir = TestDir::new("rare-utf8");
        let mut counter = RareNgramCounter::new(2, 2, dir.path(), 1 << 30).expect("counter");
        counter.add(&["fine"]).expect("valid");
        let bad: [&[u8]; 2] = [b"fine", b"\xff"];
        assert!(matches!(
            counter.add(&bad),
            Err(RareNgramError::InvalidUtf8(2))
        ));
        assert_eq!(counter.num_candidates(), 1);
        assert_eq!(
            counter.texts(&[0]).expect("texts"),
            vec!["fine".to_string()]
        );
    }

    #[test]
    fn counts_documents_not_occurrences() {
        // "ababab" holds "ab" three times but is one document: "ab" is rare at min_count 2.
        let candidates = vec!["ababab".to_string(), "xyz".to_string(), "xyz".to_string()];
        let result = run(&candidates, 2, 2, 1 << 20);
        assert_eq!(result.rare, vec![true, false, false]);
        assert_eq!(result.lengths, vec![6, 3, 3]);
        assert_eq!(result.stats.occurrences, 5 + 2 + 2);
        assert_eq!(result.stats.distinct, 4);
        assert_eq!(result.stats.rare, 2);
        assert_eq!(result.stats.alphabet, 5);
    }

    #[test]
    fn short_candidates_and_extreme_code_points() {
        let candidates = vec![
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}".to_string(),
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}".to_string(),
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFE}".to_string(),
            "\u{0}abc".to_string(),
            String::new(),
        ];
        let result = run(&candidates, 5, 2, 0);
        assert_eq!(result.rare, vec![false, false, true, false, false]);
        assert_eq!(result.lengths, vec![5, 5, 5, 4, 0]);
    }

    #[test]
    fn wide_keys_are_injective() {
        let max = (1u32 << RANK_BITS) - 1;
        let keys = [
            WideKey::from_ranks(&[max, max, max, max, max]),
            WideKey::from_ranks(&[max, max, max, max, max - 1]),
            WideKey::from_ranks(&[max - 1, max, max, max, max]),
            WideKey::from_ranks(&[0, 0, 0, 0, 1]),
            WideKey::from_ranks(&[1, 0, 0, 0, 0]),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(keys[0].high, (1u64 << (5 * RANK_BITS - 64)) - 1);
    }

    #[test]
    fn rejects_bad_settings() {
        let dir = TestDir::new("rare-bad-settings");
        assert!(matches!(
            RareNgramCounter::new(0, 2, dir.path(), 0),
            Err(RareNgramError::InvalidN(0))
        ));
        assert!(matches!(
            RareNgramCounter::new(6, 2, dir.path(), 0),
            Err(RareNgramError::InvalidN(6))
        ));
        assert!(matches!(
            RareNgramCounter::new(5, 0, dir.path(), 0),
            Err(RareNgramError::InvalidMinCount)
        ));
    }

    #[test]
    fn unwritable_spill_directory_is_an_error() {
        let dir = TestDir::new("rare-gone");
        let missing = dir.path().join("missing");
        let mut counter = RareNgramCounter::new(2, 2, &missing, 1 << 30).expect("counter");
        counter
            .add(&["abcdef"])
            .expect("within the budget, nothing is written");
        let error = counter.spill().expect_err("spill must fail");
        assert!(error.to_string().contains("missing"), "{error}");
        let mut counter = RareNgramCounter::new(2, 2, &missing, 0).expect("counter");
        let error = counter
            .add(&["abcdef"])
            .expect_err("over the budget, add spills");
        assert!(error.to_string().contains("missing"), "{error}");
    }
}
