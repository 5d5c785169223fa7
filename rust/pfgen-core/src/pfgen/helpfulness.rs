//! Helpfulness (scoring-spec.md §5): keyword rules over the first 200 characters of an answer.
//!
//! Leaves are literal strings, searched here, or regular expressions, whose match ends the
//! caller supplies (so that Python's `re` semantics stay the reference).

pub use crate::pfgen::spec::NOT_FOUND;
use crate::pfgen::spec::{FLAT, HELPFULNESS_CUT, HELPFULNESS_USEFUL};

#[derive(Clone)]
pub enum Pattern {
    /// Found by a leftmost plain substring search; the value is the end of the match.
    Literal(Vec<char>),
    /// The caller's value for the leaf with this index (a match end, or NOT_FOUND).
    External(usize),
}

#[derive(Clone)]
pub enum Rule {
    Leaf {
        pattern: Pattern,
        name: String,
    },
    /// Satisfied when every child is: the largest child value.
    All {
        children: Vec<Rule>,
        name: Option<String>,
    },
    /// Satisfied when any child is: the smallest child value.
    Any {
        children: Vec<Rule>,
        name: Option<String>,
    },
}

/// A top-level rule and its factor `1 - importance`.
pub struct WeightedRule {
    pub rule: Rule,
    pub factor: f64,
}

/// The helpfulness of one answer and the rules it did not satisfy in time.
pub struct Helpfulness<'a> {
    pub value: f64,
    /// `(name, factor)` of each unsatisfied rule, then the over-length entry if any.
    pub results: Vec<(HelpfulnessName<'a>, f64)>,
}

pub enum HelpfulnessName<'a> {
    Rule(&'a str),
    /// "{excess}字超過": the chosen length exceeds 100 characters by `excess`.
    OverLength(usize),
}

impl std::fmt::Display for HelpfulnessName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelpfulnessName::Rule(name) => f.write_str(name),
            HelpfulnessName::OverLength(excess) => write!(f, "{excess}字超過"),
        }
    }
}

impl Rule {
    /// (value, name) of the rule for the answer prefix `text`.
    fn evaluate<'a>(&'a self, text: &[char], external: &[u32]) -> (u32, &'a str) {
        match self {
            Rule::Leaf { pattern, name } => {
                let value = match pattern {
                    Pattern::Literal(needle) => literal_match_end(text, needle),
                    Pattern::External(index) => external.get(*index).copied().unwrap_or(NOT_FOUND),
                };
                (value, name)
            }
            Rule::All { children, name } => pick(children, name, text, external, |a, b| a > b),
            Rule::Any { children, name } => pick(children, name, text, external, |a, b| a < b),
        }
    }
}

/// The child value preferred by `better` (first child wins ties) and its name, unless named.
fn pick<'a>(
    children: &'a [Rule],
    name: &'a Option<String>,
    text: &[char],
    external: &[u32],
    better: fn(u32, u32) -> bool,
) -> (u32, &'a str) {
    let mut chosen: Option<(u32, &str)> = None;
    for child in children {
        let (value, child_name) = child.evaluate(text, external);
        if chosen.is_none_or(|(best, _)| better(value, best)) {
            chosen = Some((value, child_name));
        }
    }
    let (value, child_name) = chosen.unwrap_or((NOT_FOUND, ""));
    (value, name.as_deref().unwrap_or(child_name))
}

/// End of the leftmost occurrence of `needle` in `text`, or NOT_FOUND.
fn literal_match_end(text: &[char], needle: &[char]) -> u32 {
    let Some((&first, rest)) = needle.split_first() else {
        return 0;
    };
    let Some(num_starts) = (text.len() + 1).checked_sub(needle.len()) else {
        return NOT_FOUND;
    };
    // The starts holding the first character, HIT_LANES at a time (most keywords are absent
    // from most chunks); the rest is compared only there (in place: keywords are short, a
    // call to memcmp would cost more).
    let match_in = |offset: usize, mut hits: u32| {
        while hits != 0 {
            let start = offset + hits.trailing_zeros() as usize;
            if rest.iter().zip(&text[start + 1..]).all(|(a, b)| a == b) {
                return Some((start + needle.len()) as u32);
            }
            hits &= hits - 1;
        }
        None
    };
    let mut offset = 0;
    while offset + HIT_LANES <= num_starts {
        let chunk = &text[offset..offset + HIT_LANES];
        if let Some(end) = match_in(offset, first_character_hits(chunk, first)) {
            return end;
        }
        offset += HIT_LANES;
    }
    if offset == num_starts {
        return NOT_FOUND;
    }
    // The last starts: the chunk ending at the last start, less the starts already searched,
    // or one by one when the text is shorter than a chunk.
    let hits = match num_starts.checked_sub(HIT_LANES) {
        Some(from) => first_character_hits(&text[from..num_starts], first) >> (offset - from),
        None => text[..num_starts]
            .iter()
            .enumerate()
            .fold(0, |hits, (i, &c)| hits | u32::from(c == first) << i),
    };
    match_in(offset, hits).unwrap_or(NOT_FOUND)
}

/// Characters compared with a keyword's first character at once.
const HIT_LANES: usize = 16;

/// Bit i set where `chunk[i]` (HIT_LANES characters) is `first`: four vector comparisons,
/// narrowed to a bit per character (compilers turn the plain loop into scalar compares).
#[cfg(target_arch = "x86_64")]
#[inline]
fn first_character_hits(chunk: &[char], first: char) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16,
        _mm_packs_epi32, _mm_set1_epi32,
    };
    assert_eq!(chunk.len(), HIT_LANES);
    let quarter = |i: usize| -> __m128i {
        // SAFETY: SSE2 is part of x86_64; the load reads chunk[4 * i..4 * i + 4], inside
        // `chunk` (HIT_LANES = 16 characters, checked above), unaligned loads allowed.
        unsafe { _mm_loadu_si128(chunk.as_ptr().add(4 * i).cast()) }
    };
    // SAFETY: SSE2 is part of x86_64; these only compute on registers.
    unsafe {
        let wanted = _mm_set1_epi32(first as i32);
        let equal = |i: usize| _mm_cmpeq_epi32(quarter(i), wanted);
        // All-ones 32-bit lanes narrow (with signed saturation) to all-ones bytes.
        let low = _mm_packs_epi32(equal(0), equal(1));
        let high = _mm_packs_epi32(equal(2), equal(3));
        _mm_movemask_epi8(_mm_packs_epi16(low, high)) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn first_character_hits(chunk: &[char], first: char) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |hits, (i, &c)| hits | u32::from(c == first) << i)
}

/// `1 - max(i - 100, 0) / 50`.
const fn length_discount(i: usize) -> f64 {
    1.0 - (i.saturating_sub(FLAT)) as f64 / 50.0
}

/// The starting scores, `length_discount(i)` for i = 0..=HELPFULNESS_USEFUL (copied per
/// answer instead of computed, and on the stack).
const DISCOUNTS: [f64; HELPFULNESS_USEFUL + 1] = {
    let mut table = [0.0; HELPFULNESS_USEFUL + 1];
    let mut i = 0;
    while i <= HELPFULNESS_USEFUL {
        table[i] = length_discount(i);
        i += 1;
    }
    table
};

/// Helpfulness of an answer (scoring-spec.md §5); `external` holds the values of the External
/// leaves. `results` stays empty unless `with_results`.
pub fn helpfulness<'a>(
    rules: &'a [WeightedRule],
    answer: &[char],
    external: &[u32],
    with_results: bool,
) -> Helpfulness<'a> {
    let chars = &answer[..answer.len().min(HELPFULNESS_CUT)];
    let last = chars.len().min(HELPFULNESS_USEFUL);
    // The score at index i is discount(i) times the factors of the rules unsatisfied at i, in
    // rule order. With every factor in [0, 1] (importance in [0, 1], as in the published
    // rules), the scores never fall from i to i + 1 <= 100: the discount stays 1.0 and the
    // rules unsatisfied at i + 1 are some of those at i (a product rounded at each step never
    // drops when a factor in [0, 1] is left out). The largest index among the maximal scores
    // is then at min(100, last) or later, and the scores before it are not computed.
    let first = if rules.iter().all(|rule| (0.0..=1.0).contains(&rule.factor)) {
        last.min(FLAT)
    } else {
        0
    };
    let mut discounts = DISCOUNTS;
    let scores = &mut discounts[first..=last];
    // Each rule's (value, name), kept for the results.
    let mut values: Vec<(u32, &str)> = Vec::new();
    for rule in rules {
        let (value, name) = rule.rule.evaluate(chars, external);
        let unsatisfied = (value as usize).clamp(first, last + 1) - first;
        for score in &mut scores[..unsatisfied] {
            *score *= rule.factor;
        }
        if with_results {
            values.push((value, name));
        }
    }
    // The largest index among the maximal scores.
    let mut best = 0;
    for (i, &score) in scores.iter().enumerate() {
        if score >= scores[best] {
            best = i;
        }
    }
    let value = scores[best];
    let chosen = first + best;
    if !with_results {
        return Helpfulness {
            value,
            results: Vec::new(),
        };
    }
    let mut results: Vec<(HelpfulnessName, f64)> = rules
        .iter()
        .zip(&values)
        .filter(|(_, &(v, _))| v as usize > chosen)
        .map(|(rule, &(_, name))| (HelpfulnessName::Rule(name), rule.factor))
        .collect();
    if chosen > FLAT && value > 0.0 {
        results.push((
            HelpfulnessName::OverLength(chosen - FLAT),
            length_discount(chosen),
        ));
    }
    Helpfulness { value, results }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(text: &str) -> Rule {
        Rule::Leaf {
            pattern: Pattern::Literal(text.chars().collect()),
            name: text.to_string(),
        }
    }

    fn weighted(rule: Rule, importance: f64) -> WeightedRule {
        WeightedRule {
            rule,
            factor: 1.0 - importance,
        }
    }

    fn score(rules: &[WeightedRule], answer: &str) -> (f64, Vec<(String, f64)>) {
        let answer: Vec<char> = answer.chars().collect();
        let result = helpfulness(rules, &answer, &[], true);
        (
            result.value,
            result
                .results
                .iter()
                .map(|(n, f)| (n.to_string(), *f))
                .collect(),
        )
    }

    #[test]
    fn literal_matches_end_where_the_first_occurrence_ends() {
        for text in crate::common::test_texts::random_texts("あいう𠮷a", 300, 40, 5) {
            let text: Vec<char> = text.chars().collect();
            for needle in [
                &text[..0],
                &text[..text.len().min(1)],
                &text[text.len() / 2..],
            ] {
                for needle in [needle.to_vec(), [needle, &['い']].concat()] {
                    let expected = (0..=text.len())
                        .find(|&start| text[start..].starts_with(&needle))
                        .map_or(NOT_FOUND, |start| (start + needle.len()) as u32);
                    assert_eq!(
                        literal_match_end(&text, &needle),
                        expected,
                        "{text:?} {needle:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn all_keywords_present_scores_one() {
        let rules = [
            weighted(literal("算数"), 1.0),
            weighted(literal("合計"), 1.0),
        ];
        assert_eq!(score(&rules, "算数の合計です"), (1.0, vec![]));
    }

    #[test]
    fn a_missing_keyword_zeroes_the_score() {
        let rules = [
            weighted(literal("算数"), 1.0),
            weighted(literal("長針"), 1.0),
        ];
        assert_eq!(
            score(&rules, "算数です"),
            (0.0, vec![("長針".to_string(), 0.0)])
        );
    }

    #[test]
    fn half_importance_halves() {
        let rules = [weighted(literal("長さ"), 0.5)];
        assert_eq!(
            score(&rules, "短い"),
            (0.5, vec![("長さ".to_string(), 0.5)])
        );
    }

    #[test]
    fn long_answers_are_discounted_at_the_best_prefix() {
        // The keyword ends at 110: the best prefix is 110 characters, 10 over the limit.
        let answer = format!("{}鍵{}", "あ".repeat(109), "い".repeat(50));
        let rules = [weighted(literal("鍵"), 1.0)];
        let (value, results) = score(&rules, &answer);
        assert_eq!(value, 0.8);
        assert_eq!(results, vec![("10字超過".to_string(), 0.8)]);
    }

    #[test]
    fn and_takes_the_latest_child_and_or_the_earliest() {
        let and = Rule::All {
            children: vec![literal("b"), literal("a")],
            name: None,
        };
        let or = Rule::Any {
            children: vec![literal("b"), literal("a")],
            name: None,
        };
        let text: Vec<char> = "ab".chars().collect();
        assert_eq!(and.evaluate(&text, &[]), (2, "b"));
        assert_eq!(or.evaluate(&text, &[]), (1, "a"));
        let absent = Rule::Any {
            children: vec![literal("x"), literal("y")],
            name: None,
        };
        assert_eq!(absent.evaluate(&text, &[]), (NOT_FOUND, "x"));
    }

    #[test]
    fn the_chosen_prefix_is_the_last_of_the_best_among_all_prefixes() {
        // Rules whose values the caller gives (External leaves), against every prefix's score
        // computed as the spec does: factors in [0, 1], where the prefixes before 100 are
        // skipped, and outside it, where they are not.
        let factors = [0.0, 0.25, 0.5, 0.7, 1.0, -0.5, 1.5];
        let values = [0, 1, 50, 99, 100, 101, 120, 150, 151, 199, 200, NOT_FOUND];
        let mut state = 1u64;
        let mut next = |bound: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % bound
        };
        for _ in 0..3000 {
            let num_rules = 1 + next(4);
            let all_in_unit = next(2) == 0;
            let rules: Vec<WeightedRule> = (0..num_rules)
                .map(|i| WeightedRule {
                    rule: Rule::Leaf {
                        pattern: Pattern::External(i),
                        name: i.to_string(),
                    },
                    factor: factors[next(if all_in_unit { 5 } else { factors.len() })],
                })
                .collect();
            let external: Vec<u32> = (0..num_rules).map(|_| values[next(values.len())]).collect();
            let answer = vec!['a'; next(210)];
            let last = answer.len().min(HELPFULNESS_USEFUL);
            let scores: Vec<f64> = (0..=last)
                .map(|i| {
                    let unsatisfied = rules.iter().zip(&external).filter(|(_, &v)| v as usize > i);
                    unsatisfied.fold(length_discount(i), |score, (rule, _)| score * rule.factor)
                })
                .collect();
            let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let chosen = scores.iter().rposition(|&score| score == best).unwrap();
            let result = helpfulness(&rules, &answer, &external, true);
            assert_eq!(result.value.to_bits(), scores[chosen].to_bits());
            let mut expected: Vec<String> = (0..num_rules)
                .filter(|&i| external[i] as usize > chosen)
                .map(|i| i.to_string())
                .collect();
            if chosen > FLAT && best > 0.0 {
                expected.push(format!("{}字超過", chosen - FLAT));
            }
            let names: Vec<String> = result.results.iter().map(|(n, _)| n.to_string()).collect();
            assert_eq!(names, expected, "{external:?} {}", answer.len());
        }
    }

    #[test]
    fn external_leaves_take_the_callers_values() {
        let rule = Rule::Leaf {
            pattern: Pattern::External(1),
            name: "re".to_string(),
        };
        assert_eq!(rule.evaluate(&[], &[5, 7]), (7, "re"));
    }

    #[test]
    fn keywords_past_200_characters_do_not_count() {
        let answer = format!("{}鍵", "あ".repeat(200));
        let rules = [weighted(literal("鍵"), 1.0)];
        assert_eq!(score(&rules, &answer).0, 0.0);
    }
}
