//! The reference side of one question: n-gram tables of every source and their baselines,
//! and the Fluency and Truthfulness of answers against them (scoring spec §2-§4).

use crate::ngram_table::{NgramTable, NodeCode, TableBuilder, TableError, MAX_N, MAX_SOURCES, ROOT};

/// Fluency looks at the first 200 characters, but past 150 its length discount is <= 0 and a
/// non-positive value never replaces the best (which starts at 0.0): the walk stops at 150.
const FLUENCY_USEFUL: usize = 150;
/// Truthfulness reads ("^" + answer + "$")[:202].
const TRUTH_CUT: usize = 202;
/// Characters that carry no truthfulness (ASCII ^ and $ included, wherever they occur).
const EXCLUDED: [char; 19] = [
    '^', '$', '、', '。', '・', '「', '」', '『', '』', '（', '）', '【', '】', '［', '］', '〈',
    '〉', '《', '》',
];

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
    num_answers: Vec<usize>,
}

/// Scratch space of one scoring thread, reused across answers.
pub struct Scratch {
    seen: SeenNodes,
    chars: Vec<char>,
    max_frequency: Vec<u32>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            seen: SeenNodes::new(),
            chars: Vec::with_capacity(TRUTH_CUT),
            max_frequency: Vec::with_capacity(TRUTH_CUT * MAX_SOURCES),
        }
    }
}

impl ReferenceTables {
    /// Builds the tables and baselines (spec §2) of the given sources, in order.
    pub fn build(sources: &[Source]) -> Result<Self, ReferenceError> {
        if sources.is_empty() {
            return Err(ReferenceError::NoSources);
        }
        let mut tables = Vec::new();
        let mut baselines = Vec::new();
        for group in sources.chunks(MAX_SOURCES) {
            let mut builder = TableBuilder::new(group.len())?;
            for (index, source) in group.iter().enumerate() {
                if source.answers.is_empty() {
                    return Err(ReferenceError::EmptySource(source.key.to_string()));
                }
                let baseline = add_source(&mut builder, index, source.answers)?;
                if baseline == 0.0 {
                    return Err(ReferenceError::ZeroBaseline(source.key.to_string()));
                }
                baselines.push(baseline);
            }
            tables.push(builder.freeze());
        }
        Ok(ReferenceTables {
            tables,
            baselines,
            num_answers: sources.iter().map(|s| s.answers.len()).collect(),
        })
    }

    pub fn num_sources(&self) -> usize {
        self.baselines.len()
    }

    pub fn baselines(&self) -> &[f64] {
        &self.baselines
    }

    pub fn num_answers(&self) -> &[usize] {
        &self.num_answers
    }

    pub fn num_nodes(&self) -> usize {
        self.tables.iter().map(NgramTable::num_nodes).sum()
    }

    pub fn memory_bytes(&self) -> usize {
        self.tables.iter().map(NgramTable::memory_bytes).sum()
    }

    /// Fluency of `answer` against every source (spec §3), written into `out`.
    pub fn fluency(&self, answer: &str, scratch: &mut Scratch, out: &mut [f64]) {
        scratch.chars.clear();
        scratch.chars.extend(answer.chars().take(FLUENCY_USEFUL));
        for (group, table) in self.tables.iter().enumerate() {
            let first = group * MAX_SOURCES;
            let k = table.num_sources();
            fluency_of_group(
                table,
                &scratch.chars,
                &self.baselines[first..first + k],
                &mut scratch.seen,
                &mut out[first..first + k],
            );
        }
    }

    /// Truthfulness of `answer` against every source (spec §4), written into `out`.
    pub fn truthfulness(&self, answer: &str, scratch: &mut Scratch, out: &mut [f64]) {
        scratch.chars.clear();
        scratch.chars.push('^');
        scratch.chars.extend(answer.chars().take(TRUTH_CUT - 1));
        if scratch.chars.len() < TRUTH_CUT {
            scratch.chars.push('$');
        }
        for (group, table) in self.tables.iter().enumerate() {
            let first = group * MAX_SOURCES;
            let k = table.num_sources();
            truthfulness_of_group(
                table,
                &scratch.chars,
                &self.num_answers[first..first + k],
                &mut scratch.max_frequency,
                &mut out[first..first + k],
            );
        }
    }

    /// For each character of `text`, the largest document frequency, summed over sources, of
    /// the 3-grams of `text` that cover it (0 when none is in the tables).
    pub fn trigram_coverage(&self, text: &str) -> Vec<u32> {
        let chars: Vec<char> = text.chars().collect();
        let mut coverage = vec![0u32; chars.len()];
        for start in 0..chars.len().saturating_sub(2) {
            let gram = &chars[start..start + 3];
            let total: u32 = self
                .tables
                .iter()
                .filter_map(|table| table.find(gram).map(|node| (table, node)))
                .map(|(table, node)| table.frequencies(node).iter().map(|&f| f as u32).sum::<u32>())
                .sum();
            for slot in &mut coverage[start..start + 3] {
                *slot = (*slot).max(total);
            }
        }
        coverage
    }
}

/// Adds every answer of one source to the builder and returns the source's baseline: the mean,
/// in file order, of the answers' fluency with baseline 1.0, from the counts of this source.
fn add_source(
    builder: &mut TableBuilder,
    source: usize,
    answers: &[String],
) -> Result<f64, ReferenceError> {
    let mut nodes = Vec::new();
    let mut per_prefix = Vec::new();
    let mut walks = Vec::with_capacity(answers.len());
    for answer in answers {
        let chars: Vec<char> = answer.chars().collect();
        let (nodes_before, prefixes_before) = (nodes.len(), per_prefix.len());
        builder.add_document(source, &chars, FLUENCY_USEFUL, &mut nodes, &mut per_prefix)?;
        walks.push((nodes_before, prefixes_before, per_prefix.len() - prefixes_before));
    }
    // The counts of this source are final now: replay each answer's walk with them.
    let mut sum = 0.0;
    for &(mut node_index, first_prefix, num_prefixes) in &walks {
        let mut total: u64 = 0;
        let mut best = 0.0f64;
        for l in 1..=num_prefixes {
            for _ in 0..per_prefix[first_prefix + l - 1] {
                total += builder.count(nodes[node_index], source) as u64;
                node_index += 1;
            }
            let value = total as f64 * length_discount(l);
            if value > best {
                best = value;
            }
        }
        sum += best;
    }
    Ok(sum / answers.len() as f64)
}

/// `1 - max(l - 100, 0) / 50`, the discount of a prefix of length l.
#[inline]
fn length_discount(l: usize) -> f64 {
    1.0 - (l.saturating_sub(100)) as f64 / 50.0
}

fn fluency_of_group(
    table: &NgramTable,
    chars: &[char],
    baselines: &[f64],
    seen: &mut SeenNodes,
    out: &mut [f64],
) {
    let k = baselines.len();
    let mut totals = [0u64; MAX_SOURCES];
    let mut best = [0.0f64; MAX_SOURCES];
    // previous[n]: node of the n-gram ending at the previous character; n = 0 is the root.
    let mut previous = [ROOT; MAX_N + 1];
    let mut current = [ROOT; MAX_N + 1];
    let mut previous_depth = 0; // how many of previous[1..] exist
    seen.clear();
    for (index, &c) in chars.iter().enumerate() {
        let l = index + 1;
        let mut depth = 0;
        // y[l-n..l] can be in the table only if its prefix y[l-n..l-1] (previous[n-1]) is, and
        // y[l-n-1..l] only if its suffix y[l-n..l] is: extend upwards, stop at the first miss.
        for n in 1..=(previous_depth + 1).min(MAX_N) {
            match table.child(previous[n - 1], c) {
                Some(node) => {
                    current[n] = node;
                    depth = n;
                    if seen.insert(node) {
                        for (total, &frequency) in totals.iter_mut().zip(table.frequencies(node)) {
                            *total += frequency as u64;
                        }
                    }
                }
                None => break,
            }
        }
        std::mem::swap(&mut previous, &mut current);
        previous_depth = depth;
        let discount = length_discount(l);
        for s in 0..k {
            let value = totals[s] as f64 * discount / baselines[s];
            if value > best[s] {
                best[s] = value;
            }
        }
    }
    out.copy_from_slice(&best[..k]);
}

fn truthfulness_of_group(
    table: &NgramTable,
    chars: &[char],
    num_answers: &[usize],
    max_frequency: &mut Vec<u32>,
    out: &mut [f64],
) {
    let k = num_answers.len();
    max_frequency.clear();
    max_frequency.resize(chars.len() * k, 0);
    // Nodes of the 1- and 2-grams ending at the previous character.
    let (mut one, mut two): (Option<NodeCode>, Option<NodeCode>) = (None, None);
    for (end, &c) in chars.iter().enumerate() {
        let three = two.and_then(|node| table.child(node, c));
        two = one.and_then(|node| table.child(node, c));
        one = table.child(ROOT, c);
        if let Some(node) = three {
            let frequencies = table.frequencies(node);
            for j in end - 2..=end {
                for s in 0..k {
                    let slot = &mut max_frequency[j * k + s];
                    *slot = (*slot).max(frequencies[s] as u32);
                }
            }
        }
    }
    for s in 0..k {
        let mut total = 0.0f64;
        let mut count = 0u32;
        let mut current = 0.0f64;
        let mut best = 0.0f64;
        let n = num_answers[s] as f64;
        for (j, &c) in chars.iter().enumerate() {
            if EXCLUDED.contains(&c) {
                continue;
            }
            total += (max_frequency[j * k + s] as f64 / n * 200.0).min(1.0);
            count += 1;
            current = total / count as f64 * length_discount(j);
            if j >= 100 && current > best {
                best = current;
            }
        }
        out[s] = if current > best { current } else { best };
    }
}

/// The set of nodes already counted for the current answer: open addressing over node codes,
/// cleared in O(1) by bumping a generation stamp.
struct SeenNodes {
    nodes: Vec<NodeCode>,
    stamps: Vec<u32>,
    generation: u32,
}

/// At most FLUENCY_USEFUL * MAX_N nodes are inserted per answer; keep the load under one half.
const SEEN_CAPACITY: usize = 4096;

impl SeenNodes {
    fn new() -> Self {
        SeenNodes { nodes: vec![0; SEEN_CAPACITY], stamps: vec![0; SEEN_CAPACITY], generation: 0 }
    }

    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamps.fill(0);
            self.generation = 1;
        }
    }

    /// True if the node was not in the set.
    #[inline]
    fn insert(&mut self, node: NodeCode) -> bool {
        let mask = SEEN_CAPACITY - 1;
        let mut slot = (node.wrapping_mul(0x9e37_79b1) >> 20) as usize & mask;
        loop {
            if self.stamps[slot] != self.generation {
                self.stamps[slot] = self.generation;
                self.nodes[slot] = node;
                return true;
            }
            if self.nodes[slot] == node {
                return false;
            }
            slot = (slot + 1) & mask;
        }
    }
}
