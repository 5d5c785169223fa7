//! Bindings of pfgen_core::pfgen::helpfulness: a question's keyword rules as Python objects,
//! built leaf by leaf and copied into the scorer.

use pyo3::prelude::*;

use pfgen_core::pfgen::helpfulness::{Pattern, Rule};

/// A keyword rule (a leaf, or all / any of other rules), named as in `helpfulness_results`.
#[pyclass(frozen, module = "pfgen_fast._core.pfgen")]
pub(crate) struct KeywordRule {
    pub(crate) rule: Rule,
}

impl KeywordRule {
    fn children(children: &[PyRef<'_, KeywordRule>]) -> Vec<Rule> {
        children.iter().map(|child| child.rule.clone()).collect()
    }
}

#[pymethods]
impl KeywordRule {
    /// A leaf found by a plain substring search of `pattern`.
    #[staticmethod]
    fn literal(name: String, pattern: &str) -> Self {
        let pattern = Pattern::Literal(pattern.chars().collect());
        KeywordRule {
            rule: Rule::Leaf { pattern, name },
        }
    }

    /// A leaf whose match ends the caller gives: column `column` of the scorer's `external`.
    #[staticmethod]
    fn external(name: String, column: usize) -> Self {
        let pattern = Pattern::External(column);
        KeywordRule {
            rule: Rule::Leaf { pattern, name },
        }
    }

    /// Satisfied when every child is; named after the child satisfied last unless `name`.
    #[staticmethod]
    #[pyo3(signature = (children, name=None))]
    fn all_of(children: Vec<PyRef<'_, KeywordRule>>, name: Option<String>) -> Self {
        let children = KeywordRule::children(&children);
        KeywordRule {
            rule: Rule::All { children, name },
        }
    }

    /// Satisfied when any child is; named after the child satisfied first unless `name`.
    #[staticmethod]
    #[pyo3(signature = (children, name=None))]
    fn any_of(children: Vec<PyRef<'_, KeywordRule>>, name: Option<String>) -> Self {
        let children = KeywordRule::children(&children);
        KeywordRule {
            rule: Rule::Any { children, name },
        }
    }
}
