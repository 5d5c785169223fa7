//! `STEPS=automaton`: the hash tables' walk against the suffix automata's (see the harness's
//! documentation).

use std::collections::HashMap;
use std::time::Instant;

use pfgen_core::common::py_float::py_round;
use pfgen_core::common::py_sum::{py_sum, SumMode};
use pfgen_core::pfgen::reference::{Scratch, Source, GROUP};
use pfgen_core::pfgen::QuestionScorer;

use crate::automaton::References;
use crate::{literal_rules, ByQuestion, Failure, Question, Stretches};

/// Bytes written to it, and nothing kept.
#[derive(Default)]
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Every batch through the hash tables' walk, GROUP answers at a time; returns a checksum.
#[inline(never)]
fn walk_hash_tables(scorers: &[QuestionScorer], batches: &[(usize, &Vec<Vec<char>>)]) -> f64 {
    let mut scratch = Scratch::default();
    let (mut fluency, mut truthfulness) = ([0.0; GROUP * 3], [0.0; GROUP * 3]);
    let mut sum = 0.0;
    for &(index, answers) in batches {
        let references = &scorers[index].references;
        let k = references.num_sources();
        for group in answers.chunks(GROUP) {
            let n = group.len() * k;
            references.score_answers(
                group,
                &mut scratch,
                &mut fluency[..n],
                &mut truthfulness[..n],
            );
            sum += fluency[..n].iter().sum::<f64>() + truthfulness[..n].iter().sum::<f64>();
        }
    }
    sum
}

/// The same through the automata's walk.
#[inline(never)]
fn walk_automata<const PREFETCH_LINK: bool>(
    automata: &[References],
    batches: &[(usize, &Vec<Vec<char>>)],
) -> f64 {
    let mut walks = Vec::new();
    let (mut fluency, mut truthfulness) = ([0.0; GROUP * 3], [0.0; GROUP * 3]);
    let mut sum = 0.0;
    for &(index, answers) in batches {
        let references = &automata[index];
        let k = references.baselines.len();
        for group in answers.chunks(GROUP) {
            let n = group.len() * k;
            references.score_answers::<PREFETCH_LINK, _>(
                group,
                &mut walks,
                &mut fluency[..n],
                &mut truthfulness[..n],
            );
            sum += fluency[..n].iter().sum::<f64>() + truthfulness[..n].iter().sum::<f64>();
        }
    }
    sum
}

/// Checks that the automata give every answer of `answers` the hash tables' scores, and the
/// same records (rounded values, average) under both sum modes. Returns the walks' counters
/// (characters, failed transitions, suffix links followed for sums).
fn check_equal(
    question: &Question,
    scorer: &QuestionScorer,
    references: &References,
    answers: &[Vec<char>],
) -> Result<[u64; 3], Failure> {
    let k = scorer.num_sources();
    let mut scratch = Scratch::default();
    let mut walks = Vec::new();
    let mut expected = (vec![0.0; GROUP * k], vec![0.0; GROUP * k]);
    let mut got = (vec![0.0; GROUP * k], vec![0.0; GROUP * k]);
    let mut raw = (Vec::new(), Vec::new());
    for group in answers.chunks(GROUP) {
        let n = group.len() * k;
        let references_hash = &scorer.references;
        references_hash.score_answers(
            group,
            &mut scratch,
            &mut expected.0[..n],
            &mut expected.1[..n],
        );
        references.score_answers::<false, _>(group, &mut walks, &mut got.0[..n], &mut got.1[..n]);
        for i in 0..n {
            if expected.0[i].to_bits() != got.0[i].to_bits()
                || expected.1[i].to_bits() != got.1[i].to_bits()
            {
                let answer: String = group[i / k].iter().collect();
                return Err(format!(
                    "{}: answer {answer:?} source {}: hash tables ({}, {}), automaton ({}, {})",
                    question.text,
                    i % k,
                    expected.0[i],
                    expected.1[i],
                    got.0[i],
                    got.1[i]
                )
                .into());
            }
        }
        raw.0.extend_from_slice(&got.0[..n]);
        raw.1.extend_from_slice(&got.1[..n]);
    }
    for sum in [SumMode::Compensated, SumMode::Legacy] {
        let batch = scorer.score_batch(answers, &[], false, sum);
        let rounded = |values: &[f64]| -> Vec<f64> {
            values.iter().map(|v| py_round(v / k as f64, 6)).collect()
        };
        let (fluency, truthfulness) = (rounded(&raw.0), rounded(&raw.1));
        for i in 0..answers.len() {
            let row = i * k..(i + 1) * k;
            let average = py_round(
                (py_sum(fluency[row.clone()].iter().copied(), sum)
                    + py_sum(truthfulness[row.clone()].iter().copied(), sum)
                    + batch.helpfulness[i])
                    / 3.0,
                5,
            );
            if fluency[row.clone()] != batch.fluency[row.clone()]
                || truthfulness[row.clone()] != batch.truthfulness[row.clone()]
                || average.to_bits() != batch.average[i].to_bits()
            {
                return Err(format!("{}: record {i} differs ({sum:?})", question.text).into());
            }
        }
    }
    let characters = answers.iter().map(|a| a.len().min(201) as u64).sum();
    let (mut failed, mut chains) = (0, 0);
    for walk in &walks {
        failed += walk.failed_transitions;
        chains += walk.chain_steps;
    }
    Ok([characters, failed, chains])
}

pub(crate) fn run(
    questions: &[Question],
    answers: &ByQuestion,
    stretches: &Stretches,
    rounds: usize,
) -> Result<(), Failure> {
    let only = std::env::var("WALK").ok();
    let num_questions: usize = std::env::var("QUESTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(questions.len());
    let questions = &questions[..num_questions.min(questions.len())];
    let mut scorers = Vec::with_capacity(questions.len());
    let mut automata = Vec::with_capacity(questions.len());
    let (mut hash_build, mut automaton_build) = (Vec::new(), Vec::new());
    let (mut hash_bytes, mut automaton_bytes, mut file_bytes) = (Vec::new(), Vec::new(), 0);
    for question in questions {
        let sources: Vec<Source> = question
            .sources
            .iter()
            .map(|(key, answers)| Source { key, answers })
            .collect();
        let start = Instant::now();
        let scorer = QuestionScorer::new(&sources, literal_rules(question), 0)?;
        hash_build.push(start.elapsed().as_secs_f64());
        let documents: Vec<&[String]> =
            question.sources.iter().map(|(_, a)| a.as_slice()).collect();
        let start = Instant::now();
        let references = References::build(&documents);
        automaton_build.push(start.elapsed().as_secs_f64());
        let baselines_equal = references
            .baselines
            .iter()
            .zip(scorer.references.baselines())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        if !baselines_equal {
            return Err(format!("{}: baselines differ", question.text).into());
        }
        let mut count = ByteCount::default();
        scorer.references.write_to(&mut count)?;
        file_bytes += count.0;
        hash_bytes.push(scorer.references.memory_bytes() as f64);
        automaton_bytes.push(references.memory_bytes() as f64);
        scorers.push(scorer);
        automata.push(references);
    }
    let mib = |bytes: f64| bytes / (1 << 20) as f64;
    let total = |values: &[f64]| values.iter().sum::<f64>();
    println!(
        "build per question, hash tables: median {:.1} ms, max {:.1} ms, all {:.2} s",
        1e3 * median(&hash_build),
        1e3 * hash_build.iter().copied().fold(0.0, f64::max),
        total(&hash_build)
    );
    println!(
        "build per question, automata (with baselines): median {:.1} ms, max {:.1} ms, all {:.2} s",
        1e3 * median(&automaton_build),
        1e3 * automaton_build.iter().copied().fold(0.0, f64::max),
        total(&automaton_build)
    );
    println!(
        "memory per question, hash tables: median {:.2} MiB, all {:.1} MiB (table files {:.1} MiB)",
        mib(median(&hash_bytes)),
        mib(total(&hash_bytes)),
        mib(file_bytes as f64)
    );
    println!(
        "memory per question, automata: median {:.2} MiB, all {:.1} MiB (a file of the same \
         arrays: the same size plus a header)",
        mib(median(&automaton_bytes)),
        mib(total(&automaton_bytes))
    );
    let states: usize = automata
        .iter()
        .flat_map(|r| r.automata.iter().map(|a| a.num_states()))
        .sum();
    let transitions: usize = automata
        .iter()
        .flat_map(|r| r.automata.iter().map(|a| a.num_transitions))
        .sum();
    let nodes: usize = scorers.iter().map(|s| s.references.num_nodes()).sum();
    println!("hash table nodes {nodes}, automaton states {states}, transitions {transitions}");

    let index_of: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(index, q)| (q.text.as_str(), index))
        .collect();
    if only.is_none() {
        let mut counters = [0u64; 3];
        let mut checked = 0;
        for (index, question) in questions.iter().enumerate() {
            let Some(answers) = answers.get(&question.text) else {
                continue;
            };
            let found = check_equal(question, &scorers[index], &automata[index], answers)?;
            for (total, value) in counters.iter_mut().zip(found) {
                *total += value;
            }
            checked += answers.len();
        }
        println!(
            "equal scores and records (both sum modes) on all {checked} published answers; per \
             character: {:.3} failed transitions, {:.3} suffix links for sums",
            counters[1] as f64 / counters[0] as f64,
            counters[2] as f64 / counters[0] as f64
        );
    }

    let limit: usize = std::env::var("STRETCHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    let batches: Vec<(usize, &Vec<Vec<char>>)> = stretches
        .iter()
        .filter_map(|(text, answers)| Some((*index_of.get(text.as_str())?, answers)))
        .take(limit)
        .collect();
    let num_answers: usize = batches.iter().map(|(_, a)| a.len()).sum();
    let (mut hash_times, mut automaton_times, mut link_times) =
        (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        if only.as_deref() != Some("automaton") {
            let start = Instant::now();
            let sum = walk_hash_tables(&scorers, &batches);
            hash_times.push(start.elapsed().as_secs_f64());
            std::hint::black_box(sum);
        }
        if only.as_deref() != Some("hash") {
            let start = Instant::now();
            let sum = walk_automata::<false>(&automata, &batches);
            automaton_times.push(start.elapsed().as_secs_f64());
            std::hint::black_box(sum);
        }
        if only.is_none() {
            let start = Instant::now();
            let sum = walk_automata::<true>(&automata, &batches);
            link_times.push(start.elapsed().as_secs_f64());
            std::hint::black_box(sum);
        }
    }
    let report = |name: &str, times: &[f64]| {
        if !times.is_empty() {
            let best = times.iter().copied().fold(f64::MAX, f64::min);
            println!(
                "{name}: {num_answers} answers in trials order ({} batches): best {best:.3} s \
                 ({:.0} answers/s), median {:.3} s",
                batches.len(),
                num_answers as f64 / best,
                median(times)
            );
        }
    };
    report("walk, hash tables", &hash_times);
    report("walk, automata", &automaton_times);
    report(
        "walk, automata, suffix links' transitions prefetched too",
        &link_times,
    );
    let best = |t: &[f64]| t.iter().copied().fold(f64::MAX, f64::min);
    for (name, times) in [
        ("automata", &automaton_times),
        ("automata, links prefetched", &link_times),
    ] {
        if !hash_times.is_empty() && !times.is_empty() {
            println!(
                "{name} against hash tables (speed): best {:.3}, median {:.3}",
                best(&hash_times) / best(times),
                median(&hash_times) / median(times)
            );
        }
    }
    Ok(())
}
