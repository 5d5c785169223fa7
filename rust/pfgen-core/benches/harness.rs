//! Benchmark harness of the core on the published pfgen-bench data:
//!
//!     cargo bench -p pfgen-core --bench harness
//!
//! Reads the 50 question files and every published `trials.jsonl.xz` from `$PFGEN_BENCH_DIR`
//! (default: `../shared/pfgen-bench` beside the checkout; the trials are decompressed with the
//! `xz` command), then times building the n-gram tables of every question, scoring every
//! published answer (Fluency and Truthfulness only), and scoring them again with the keyword
//! rules (those without regular expressions) and their JSON records, and scoring every distinct
//! published answer once in the trials files' order (sorted paths; within a file, stretches of
//! answers to one question, each stretch one batch: the tables of all questions in turn), and
//! the same batches grouped by question (each question's tables in the caches). Prints answers
//! per second and a checksum of the scores, which must not change when the code does.
//! `ROUNDS` (default 3) rounds are run and the best time of each step is printed; `STEPS=trials`
//! runs only the tables and the trials order's batches; the rayon pool follows
//! `RAYON_NUM_THREADS` (one core: `RAYON_NUM_THREADS=1 taskset -c 0 cargo bench ...`).
//!
//! `STEPS=automaton` compares the walk over the n-gram hash tables with the prototype walk over
//! suffix automata (`harness/automaton.rs`, issue 56): build time and memory per question, the
//! table file's size, equal scores and records on every published answer under both sum
//! modes, then `ROUNDS` alternated rounds of both walks over the trials order's batches (one
//! thread), best and median. `WALK=hash` or `WALK=automaton` runs one walk only, `STRETCHES=N`
//! the first N batches, `QUESTIONS=N` the first N questions (for
//! `valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*walk_*'`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use pfgen_core::common::py_sum::SumMode;
use pfgen_core::pfgen::answer_lines::read_answer_lines;
use pfgen_core::pfgen::helpfulness::{Pattern, Rule, WeightedRule};
use pfgen_core::pfgen::reference::Source;
use pfgen_core::pfgen::QuestionScorer;

#[path = "harness/automaton.rs"]
mod automaton;
#[path = "harness/compare_walks.rs"]
mod compare_walks;

type Failure = Box<dyn std::error::Error>;

/// One question: its text, its sources' reference answers, its literal keyword rules.
pub(crate) struct Question {
    pub(crate) text: String,
    pub(crate) sources: Vec<(String, Vec<String>)>,
    keywords: Vec<serde_json::Value>,
}

fn bench_dir() -> PathBuf {
    match std::env::var_os("PFGEN_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/pfgen-bench"),
    }
}

fn read_question(path: &Path) -> Result<Question, Failure> {
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let field = |name: &str| {
        value
            .get(name)
            .ok_or_else(|| format!("{}: no field {name}", path.display()))
    };
    let text = field("question")?
        .as_str()
        .ok_or_else(|| format!("{}: question is not a string", path.display()))?
        .to_string();
    let mut sources = Vec::new();
    for (key, answers) in field("answers")?
        .as_object()
        .ok_or_else(|| format!("{}: answers is not an object", path.display()))?
    {
        let answers = answers
            .as_array()
            .ok_or_else(|| format!("{}: answers.{key} is not a list", path.display()))?
            .iter()
            .filter_map(|answer| answer.as_str().map(str::to_string))
            .collect();
        sources.push((key.clone(), answers));
    }
    let keywords = field("keywords")?.as_array().cloned().unwrap_or_default();
    Ok(Question {
        text,
        sources,
        keywords,
    })
}

/// A keyword rule as the core's rule, if none of its leaves is a regular expression.
fn literal_rule(rule: &serde_json::Value) -> Option<Rule> {
    let name = rule
        .get("name")
        .and_then(|n| n.as_str())
        .map(str::to_string);
    if let Some(pattern) = rule.get("t").and_then(|t| t.as_str()) {
        if pattern.contains([
            '.', '^', '$', '*', '+', '?', '{', '}', '[', ']', '\\', '|', '(', ')',
        ]) {
            return None;
        }
        return Some(Rule::Leaf {
            name: name.unwrap_or_else(|| pattern.to_string()),
            pattern: Pattern::Literal(pattern.chars().collect()),
        });
    }
    let (all, children) = match (rule.get("and"), rule.get("or")) {
        (Some(children), _) => (true, children),
        (None, Some(children)) => (false, children),
        _ => return None,
    };
    let children = children
        .as_array()?
        .iter()
        .map(literal_rule)
        .collect::<Option<Vec<_>>>()?;
    Some(if all {
        Rule::All { children, name }
    } else {
        Rule::Any { children, name }
    })
}

pub(crate) fn literal_rules(question: &Question) -> Vec<WeightedRule> {
    question
        .keywords
        .iter()
        .filter_map(|keyword| {
            let importance = keyword
                .get("importance")
                .and_then(|i| i.as_f64())
                .unwrap_or(1.0);
            literal_rule(keyword).map(|rule| WeightedRule {
                rule,
                factor: 1.0 - importance,
            })
        })
        .collect()
}

/// Answers (as characters) by question text.
pub(crate) type ByQuestion = HashMap<String, Vec<Vec<char>>>;
/// Stretches of answers to one question (its text) in the trials files' order.
pub(crate) type Stretches = Vec<(String, Vec<Vec<char>>)>;

/// Every published trial answer, by question text; and every distinct one once, in stretches.
fn published_answers(result_dir: &Path) -> Result<(ByQuestion, Stretches), Failure> {
    let mut files = Vec::new();
    let mut pending = vec![result_dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .file_name()
                .is_some_and(|name| name == "trials.jsonl.xz")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut answers = ByQuestion::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut stretches: Stretches = Vec::new();
    for file in files {
        let output = Command::new("xz").arg("-dc").arg(&file).output()?;
        if !output.status.success() {
            return Err(format!("xz -dc {} failed", file.display()).into());
        }
        let block = output.stdout;
        let lines = read_answer_lines(&block);
        for (line, &question) in lines.question_of_line.iter().enumerate() {
            let (Ok(question), Some(answer)) =
                (usize::try_from(question), lines.answer(&block, line))
            else {
                continue;
            };
            let text = &lines.questions[question];
            answers
                .entry(text.clone())
                .or_default()
                .push(answer.chars().collect());
            if !seen.insert((text.clone(), answer.to_string())) {
                continue;
            }
            match stretches.last_mut() {
                Some((last, stretch)) if last == text => stretch.push(answer.chars().collect()),
                _ => stretches.push((text.clone(), vec![answer.chars().collect()])),
            }
        }
    }
    Ok((answers, stretches))
}

fn main() -> Result<(), Failure> {
    let dir = bench_dir();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut question_files: Vec<PathBuf> = std::fs::read_dir(dir.join("data"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    question_files.retain(|path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.starts_with('Q') && name.ends_with(".json")
    });
    question_files.sort();
    let questions = question_files
        .iter()
        .map(|path| read_question(path))
        .collect::<Result<Vec<_>, _>>()?;
    let (answers, stretches) = published_answers(&dir.join("result"))?;
    if std::env::var("STEPS").is_ok_and(|steps| steps == "automaton") {
        return compare_walks::run(&questions, &answers, &stretches, rounds);
    }
    let no_answers = Vec::new();
    let answers_of: Vec<&Vec<Vec<char>>> = questions
        .iter()
        .map(|q| answers.get(&q.text).unwrap_or(&no_answers))
        .collect();
    let total: usize = answers_of.iter().map(|a| a.len()).sum();
    println!(
        "{} questions, {total} published answers, {rounds} rounds",
        questions.len()
    );

    let scorer_of: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(index, q)| (q.text.as_str(), index))
        .collect();
    let stretch_answers: usize = stretches.iter().map(|(_, a)| a.len()).sum();
    let (mut best_build, mut best_score, mut best_records) = (f64::MAX, f64::MAX, f64::MAX);
    let (mut best_trials_order, mut trials_checksum) = (f64::MAX, 0.0);
    let (mut best_grouped, mut grouped_checksum) = (f64::MAX, 0.0);
    // The trials order's batches (scorer index, answers), those of each question together.
    let mut grouped_stretches: Vec<(usize, &Vec<Vec<char>>)> = stretches
        .iter()
        .filter_map(|(text, answers)| Some((*scorer_of.get(text.as_str())?, answers)))
        .collect();
    grouped_stretches.sort_by_key(|&(index, _)| index);
    let (mut checksum, mut record_bytes) = (0.0, 0);
    // `STEPS=trials`: only the tables and the trials order's batches (quicker to measure).
    let all_steps = std::env::var("STEPS").map_or(true, |steps| steps != "trials");
    for _ in 0..rounds {
        let start = Instant::now();
        let mut scorers = Vec::with_capacity(questions.len());
        for question in &questions {
            let sources: Vec<Source> = question
                .sources
                .iter()
                .map(|(key, answers)| Source { key, answers })
                .collect();
            scorers.push(QuestionScorer::new(&sources, literal_rules(question), 0)?);
        }
        best_build = best_build.min(start.elapsed().as_secs_f64());

        let start = Instant::now();
        let mut sum = 0.0;
        for (scorer, answers) in scorers.iter().zip(&answers_of).filter(|_| all_steps) {
            let batch = scorer.score_batch(answers, &[], false, SumMode::default());
            sum += batch.fluency.iter().sum::<f64>() + batch.truthfulness.iter().sum::<f64>();
        }
        best_score = best_score.min(start.elapsed().as_secs_f64());
        checksum = sum;

        let start = Instant::now();
        let mut bytes = 0;
        for ((scorer, answers), question) in scorers
            .iter()
            .zip(&answers_of)
            .zip(&questions)
            .filter(|_| all_steps)
        {
            let keys: Vec<String> = question.sources.iter().map(|(k, _)| k.clone()).collect();
            let batch = scorer.score_batch(answers, &[], true, SumMode::default());
            bytes += batch
                .records_json(&keys)
                .iter()
                .map(String::len)
                .sum::<usize>();
        }
        best_records = best_records.min(start.elapsed().as_secs_f64());
        record_bytes = bytes;

        let start = Instant::now();
        let mut sum = 0.0;
        for (text, answers) in &stretches {
            let Some(&index) = scorer_of.get(text.as_str()) else {
                continue;
            };
            let batch = scorers[index].score_batch(answers, &[], false, SumMode::default());
            sum += batch.fluency.iter().sum::<f64>() + batch.truthfulness.iter().sum::<f64>();
        }
        best_trials_order = best_trials_order.min(start.elapsed().as_secs_f64());
        trials_checksum = sum;
        // The same batches, those of each question one after another.
        let start = Instant::now();
        let mut sum = 0.0;
        for (index, answers) in &grouped_stretches {
            let batch = scorers[*index].score_batch(answers, &[], false, SumMode::default());
            sum += batch.fluency.iter().sum::<f64>() + batch.truthfulness.iter().sum::<f64>();
        }
        best_grouped = best_grouped.min(start.elapsed().as_secs_f64());
        grouped_checksum = sum;
    }
    println!("table build (50 questions): {best_build:.3} s");
    println!(
        "scoring (Fluency, Truthfulness): {:.0} answers/s, checksum {checksum:.6}",
        total as f64 / best_score
    );
    println!(
        "scoring with literal keyword rules and records: {:.0} answers/s, {record_bytes} bytes",
        total as f64 / best_records
    );
    println!(
        "scoring in trials order, each answer once ({stretch_answers} answers, {} batches): \
         {:.0} answers/s, checksum {trials_checksum:.6}",
        stretches.len(),
        stretch_answers as f64 / best_trials_order
    );
    println!(
        "the same batches, each question's one after another (its tables in the caches): \
         {:.0} answers/s, checksum {grouped_checksum:.6}",
        stretch_answers as f64 / best_grouped
    );
    Ok(())
}
