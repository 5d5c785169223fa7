//! The per-answer record (scoring-spec.md §6) as JSON text, formatted as Python's
//! `json.dumps(record, ensure_ascii=False)` would: ", " and ": " separators, floats in `repr`
//! form. Writing it here spares building a Python dict per answer.

use std::fmt::Write;

use crate::common::py_json::{write_json_string, write_python_float};
use crate::pfgen::helpfulness::HelpfulnessName;

/// One record: per-source fluency and truthfulness (keys in order), helpfulness, its results
/// and the average.
pub struct Record<'a> {
    pub sources: &'a [String],
    pub fluency: &'a [f64],
    pub truthfulness: &'a [f64],
    pub helpfulness: f64,
    pub helpfulness_results: &'a [(HelpfulnessName<'a>, f64)],
    pub average: f64,
}

impl Record<'_> {
    pub fn write_json(&self, out: &mut String) {
        out.push_str("{\"fluency\": ");
        write_source_map(out, self.sources, self.fluency);
        out.push_str(", \"fluency_discount\": 1.0, \"truthfulness\": ");
        write_source_map(out, self.sources, self.truthfulness);
        out.push_str(", \"helpfulness\": ");
        write_python_float(out, self.helpfulness);
        out.push_str(", \"helpfulness_results\": [");
        for (index, (name, factor)) in self.helpfulness_results.iter().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            out.push('[');
            match name {
                HelpfulnessName::Rule(name) => write_json_string(out, name),
                HelpfulnessName::OverLength(excess) => {
                    let _ = write!(out, "\"{excess}字超過\"");
                }
            }
            out.push_str(", ");
            write_python_float(out, *factor);
            out.push(']');
        }
        out.push_str("], \"average\": ");
        write_python_float(out, self.average);
        out.push('}');
    }
}

fn write_source_map(out: &mut String, sources: &[String], values: &[f64]) {
    out.push('{');
    for (index, (source, &value)) in sources.iter().zip(values).enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        write_json_string(out, source);
        out.push_str(": ");
        write_python_float(out, value);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout() {
        let sources = ["P".to_string(), "S".to_string()];
        let results = [
            (HelpfulnessName::Rule("長針"), 0.0),
            (HelpfulnessName::OverLength(3), 0.94),
        ];
        let record = Record {
            sources: &sources,
            fluency: &[0.5, 0.25],
            truthfulness: &[1.0, 0.125],
            helpfulness: 0.0,
            helpfulness_results: &results,
            average: 0.625,
        };
        let mut out = String::new();
        record.write_json(&mut out);
        assert_eq!(
            out,
            "{\"fluency\": {\"P\": 0.5, \"S\": 0.25}, \"fluency_discount\": 1.0, \
             \"truthfulness\": {\"P\": 1.0, \"S\": 0.125}, \"helpfulness\": 0.0, \
             \"helpfulness_results\": [[\"長針\", 0.0], [\"3字超過\", 0.94]], \"average\": 0.625}"
        );
    }
}
