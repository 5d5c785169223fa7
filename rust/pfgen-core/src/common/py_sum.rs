//! CPython's built-in `sum()` of floats, as both interpreter generations compute it: the
//! official tools add scores with `sum()`, and the published files were written under both.
//!
//! `sum(values)` starts from the int 0; the first float turns it into `0 + x` (a float add, so
//! -0.0 becomes 0.0), and every later float is added to that float:
//! * Python <= 3.11: plainly, left to right;
//! * Python >= 3.12: with Neumaier's compensation (`builtin_sum_impl`): the rounding error of
//!   each add is accumulated in `c`, from whichever operand is larger in magnitude, and `c` is
//!   added once at the end, only when it is non-zero and finite (so that a negative zero keeps
//!   its sign and an overflowed sum does not become NaN).

/// Which `sum()` to reproduce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SumMode {
    /// Python >= 3.12: Neumaier compensated summation.
    #[default]
    Compensated,
    /// Python <= 3.11: plain left-to-right additions.
    Legacy,
}

impl SumMode {
    pub fn from_legacy(legacy: bool) -> SumMode {
        if legacy {
            SumMode::Legacy
        } else {
            SumMode::Compensated
        }
    }
}

/// `sum(values)` of Python floats under `mode`. An empty sequence gives 0.0 (Python's is the
/// int 0, equal to it).
pub fn py_sum<I: IntoIterator<Item = f64>>(values: I, mode: SumMode) -> f64 {
    let mut values = values.into_iter();
    let Some(first) = values.next() else {
        return 0.0;
    };
    let mut sum = 0.0 + first;
    match mode {
        SumMode::Legacy => {
            for x in values {
                sum += x;
            }
            sum
        }
        SumMode::Compensated => {
            let mut compensation = 0.0;
            for x in values {
                let total = sum + x;
                if sum.abs() >= x.abs() {
                    compensation += (sum - total) + x;
                } else {
                    compensation += (x - total) + sum;
                }
                sum = total;
            }
            if compensation != 0.0 && compensation.is_finite() {
                sum += compensation;
            }
            sum
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(values: &[f64]) -> (f64, f64) {
        (
            py_sum(values.iter().copied(), SumMode::Compensated),
            py_sum(values.iter().copied(), SumMode::Legacy),
        )
    }

    #[test]
    fn tenths_add_up_to_one_only_with_compensation() {
        assert_eq!(both(&[0.1; 10]), (1.0, 0.9999999999999999));
    }

    #[test]
    fn cancellation_keeps_the_small_term_only_with_compensation() {
        assert_eq!(both(&[1e100, 1.0, -1e100]), (1.0, 0.0));
        assert_eq!(both(&[1.0, 1e100, 1.0, -1e100]), (2.0, 0.0));
    }

    #[test]
    fn start_value_and_signs() {
        assert_eq!(both(&[]), (0.0, 0.0));
        let (compensated, legacy) = both(&[-0.0]);
        assert!(compensated.is_sign_positive() && legacy.is_sign_positive());
        let (compensated, legacy) = both(&[-0.0, -0.0]);
        assert!(compensated.is_sign_positive() && legacy.is_sign_positive());
        assert_eq!(both(&[-1.5, 0.25]), (-1.25, -1.25));
    }

    #[test]
    fn overflow_and_non_finite_values() {
        let (compensated, legacy) = both(&[f64::MAX, f64::MAX, -f64::MAX]);
        assert_eq!((compensated, legacy), (f64::INFINITY, f64::INFINITY));
        let (compensated, _) = both(&[f64::INFINITY, 1.0]);
        assert_eq!(compensated, f64::INFINITY);
        let (compensated, legacy) = both(&[f64::INFINITY, f64::NEG_INFINITY]);
        assert!(compensated.is_nan() && legacy.is_nan());
        assert!(both(&[f64::NAN, 1.0]).0.is_nan());
    }

    #[test]
    fn compensation_is_taken_from_the_larger_operand() {
        // Quarter epsilons are each lost against 1.0; their errors add up to one epsilon.
        let small = f64::EPSILON / 4.0;
        assert_eq!(
            both(&[1.0, small, small, small, small]).0,
            1.0 + f64::EPSILON
        );
        assert_eq!(
            both(&[small, small, 1.0, small, small]).0,
            1.0 + f64::EPSILON
        );
        assert_eq!(both(&[1.0, small, small, small, small]).1, 1.0);
    }
}
