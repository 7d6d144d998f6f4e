//! How sure a figure is: the median with a 95 % confidence interval from order statistics
//! (distribution-free: the ranks n/2 ± 0.98·√n of the sorted samples), and the median
//! absolute deviation. Repetitions adapt until the interval is narrow enough.

use std::time::{Duration, Instant};

/// One figure's samples summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub mad: f64,
    pub samples: usize,
}

impl Summary {
    /// The summary of `samples` (at least one).
    pub fn of(samples: &[f64]) -> Summary {
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        // Order-statistic interval for the median: ranks (1-based) j and k with
        // j = floor((n - 1.96 √n) / 2), k = ceil(1 + (n + 1.96 √n) / 2), clamped.
        let half = 1.96 * (n as f64).sqrt();
        let j = (((n as f64 - half) / 2.0).floor() as usize).clamp(1, n);
        let k = ((1.0 + (n as f64 + half) / 2.0).ceil() as usize).clamp(1, n);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        let mad = if n % 2 == 1 { dev[n / 2] } else { (dev[n / 2 - 1] + dev[n / 2]) / 2.0 };
        Summary { median, ci_low: v[j - 1], ci_high: v[k - 1], mad, samples: n }
    }

    /// The interval's half-width relative to the median.
    pub fn relative_halfwidth(&self) -> f64 {
        if self.median <= 0.0 {
            return 0.0;
        }
        (self.ci_high - self.ci_low) / 2.0 / self.median
    }
}

/// When to stop repeating: a fixed count (`--reps`), or until every figure's interval is
/// within `noise` of its median, at least `min` and within `budget` (then the figures still
/// wide are noisy).
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub fixed: Option<usize>,
    pub min: usize,
    pub noise: f64,
    pub budget: Duration,
}

/// Runs `rep` (one repetition of every figure, returning them in a fixed order) after one
/// warm-up, as `policy` says; returns each figure's summary and whether it hit the budget.
pub fn sample<const N: usize>(policy: &Policy, mut rep: impl FnMut() -> [f64; N]) -> [(Summary, bool); N] {
    let _ = rep(); // warm-up
    let start = Instant::now();
    let mut all: [Vec<f64>; N] = std::array::from_fn(|_| Vec::new());
    loop {
        for (list, x) in all.iter_mut().zip(rep()) {
            list.push(x);
        }
        let n = all[0].len();
        if let Some(fixed) = policy.fixed {
            if n >= fixed {
                break;
            }
            continue;
        }
        if n < policy.min {
            continue;
        }
        let narrow = all.iter().all(|l| Summary::of(l).relative_halfwidth() <= policy.noise);
        if narrow || start.elapsed() >= policy.budget {
            break;
        }
    }
    std::array::from_fn(|i| {
        let s = Summary::of(&all[i]);
        (s, policy.fixed.is_none() && s.relative_halfwidth() > policy.noise)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_of_known_samples() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((s.median, s.ci_low, s.ci_high, s.mad, s.samples), (3.0, 1.0, 5.0, 1.0, 5));
        // 100 samples 1..=100: ranks 40 and 61.
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v);
        assert_eq!((s.median, s.ci_low, s.ci_high), (50.5, 40.0, 61.0));
        // An even count's MAD is the mean of the two middle deviations (0.5, 0.5, 1.5, 1.5 for
        // 1..=4; 24.5 and 25.5 for 1..=100), as its median is of the two middle samples.
        assert_eq!(s.mad, 25.0);
        assert_eq!(Summary::of(&[4.0, 1.0, 3.0, 2.0]).mad, 1.0);
    }

    #[test]
    fn sampling_stops_when_narrow_or_fixed() {
        let policy = Policy { fixed: None, min: 5, noise: 0.02, budget: Duration::from_secs(5) };
        let mut calls = 0;
        let [(s, noisy)] = sample(&policy, || {
            calls += 1;
            [1.0]
        });
        assert_eq!((s.samples, noisy, calls), (5, false, 6), "constant figures stop at the minimum");
        let fixed = Policy { fixed: Some(9), ..policy };
        let [(s, _)] = sample(&fixed, || [1.0]);
        assert_eq!(s.samples, 9);
        // Alternating 1 and 3: never within 2 %, so the budget ends it and it is noisy.
        let short = Policy { budget: Duration::from_millis(30), ..policy };
        let mut t = 0.0f64;
        let [(_, noisy)] = sample(&short, || {
            t = 4.0 - t.max(1.0);
            [t]
        });
        assert!(noisy);
    }
}
