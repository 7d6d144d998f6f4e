//! Did a change make it slower? Two runs compared case by case and column by column: the
//! ratio of medians and a verdict. Intervals that overlap are SAME (within the noise
//! threshold) or UNSURE, never FASTER or SLOWER.

use serde::Serialize;
use serde_json::Value;

#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    #[serde(rename = "SAME")]
    Same,
    #[serde(rename = "FASTER")]
    Faster,
    #[serde(rename = "SLOWER")]
    Slower,
    #[serde(rename = "UNSURE")]
    Unsure,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Same => "SAME",
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Unsure => "UNSURE",
        })
    }
}

/// One figure in a run: its median and 95 % interval.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// The verdict on a time (lower is better) going from `old` to `new`: overlapping
/// intervals are SAME where the medians are within `noise` (a fraction) of each other, else
/// UNSURE; disjoint ones FASTER or SLOWER.
pub fn verdict(old: Figure, new: Figure, noise: f64) -> Verdict {
    let overlap = new.low <= old.high && old.low <= new.high;
    let ratio = new.median / old.median;
    match (overlap, ratio) {
        (true, r) if (r - 1.0).abs() <= noise => Verdict::Same,
        (true, _) => Verdict::Unsure,
        (false, r) if r < 1.0 => Verdict::Faster,
        (false, _) => Verdict::Slower,
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct Entry {
    pub case: String,
    pub column: String,
    pub old_ms: f64,
    pub new_ms: f64,
    pub ratio: f64,
    pub verdict: Verdict,
}

/// The time columns compared (each `*_ms` with its interval, where the run recorded one).
pub const COLUMNS: [&str; 11] = [
    "cpu_ms",
    "cpu_fresh_ms",
    "cpu_arena_ms",
    "memcpy_ms",
    "gpu_kernel_ms",
    "gpu_copy_ms",
    "gpu_roofline_ms",
    "gpu_e2e_pooled_ms",
    "gpu_kernel_wall_ms",
    "gpu_kernel_batch_ms",
    "gpu_copy_batch_ms",
];

fn case_key(r: &Value) -> String {
    // A gradient's figures are of another case than the pad's.
    let direction = if r["backward"].as_bool() == Some(true) { " backward" } else { "" };
    // Interior padding makes another case of the same pads.
    let interior = if r["interior"].is_null() { String::new() } else { format!(" interior {}", r["interior"]) };
    format!(
        "{} {} {} {}{interior}{direction}",
        r["dtype"].as_str().unwrap_or("?"),
        r["shape"],
        r["pads"],
        r["mode"].as_str().unwrap_or("?")
    )
}

fn figure(r: &Value, column: &str) -> Option<Figure> {
    let median = r[column].as_f64()?;
    let stem = column.trim_end_matches("_ms");
    // A run without intervals (older reports, --reps 1): the median alone.
    let low = r[format!("{stem}_ci_low_ms")].as_f64().unwrap_or(median);
    let high = r[format!("{stem}_ci_high_ms")].as_f64().unwrap_or(median);
    Some(Figure { median, low, high })
}

/// Every case and column the two reports share.
pub fn compare(old: &Value, new: &Value, noise: f64) -> Vec<Entry> {
    let empty = Vec::new();
    let old_records = old["records"].as_array().unwrap_or(&empty);
    let mut out = Vec::new();
    for n in new["records"].as_array().unwrap_or(&empty) {
        let key = case_key(n);
        let Some(o) = old_records.iter().find(|o| case_key(o) == key) else { continue };
        for column in COLUMNS {
            if let (Some(a), Some(b)) = (figure(o, column), figure(n, column)) {
                // A figure of 0 was not measured (--steady-only): no ratio.
                if a.median > 0.0 && b.median > 0.0 {
                    out.push(Entry {
                        case: key.clone(),
                        column: column.to_string(),
                        old_ms: a.median,
                        new_ms: b.median,
                        ratio: b.median / a.median,
                        verdict: verdict(a, b, noise),
                    });
                }
            }
        }
    }
    out
}

pub fn print(entries: &[Entry]) {
    println!("{:<58} {:<20} {:>10} {:>10} {:>7}  verdict", "case", "column", "old ms", "new ms", "ratio");
    for e in entries {
        println!(
            "{:<58} {:<20} {:>10.4} {:>10.4} {:>7.3}  {}",
            e.case, e.column, e.old_ms, e.new_ms, e.ratio, e.verdict
        );
    }
    let count = |v: Verdict| entries.iter().filter(|e| e.verdict == v).count();
    println!(
        "{} SAME, {} FASTER, {} SLOWER, {} UNSURE",
        count(Verdict::Same),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::Unsure)
    );
}

/// The entries SLOWER by more than `pct` percent.
pub fn regressions(entries: &[Entry], pct: f64) -> Vec<&Entry> {
    entries.iter().filter(|e| e.verdict == Verdict::Slower && e.ratio > 1.0 + pct / 100.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(median: f64, spread: f64) -> Figure {
        Figure { median, low: median - spread, high: median + spread }
    }

    #[test]
    fn identical_runs_are_same_and_twice_as_slow_is_slower() {
        assert_eq!(verdict(f(10.0, 0.1), f(10.0, 0.1), 0.02), Verdict::Same);
        assert_eq!(verdict(f(10.0, 0.1), f(20.0, 0.2), 0.02), Verdict::Slower);
        assert_eq!(verdict(f(20.0, 0.2), f(10.0, 0.1), 0.02), Verdict::Faster);
    }

    /// Round six: each side's interval is its own low and high (reading the high end from
    /// the low field made these overlapping runs SLOWER).
    #[test]
    fn intervals_are_read_from_their_own_fields() {
        let rec = |ms: f64, low: f64, high: f64| {
            serde_json::json!({"records": [{"dtype": "float32", "shape": [4], "pads": [1, 1], "mode": "edge",
                "gpu_kernel_ms": ms, "gpu_kernel_ci_low_ms": low, "gpu_kernel_ci_high_ms": high}]})
        };
        let e = compare(&rec(1.0, 0.9, 1.1), &rec(1.05, 1.0, 1.2), 0.02);
        assert_eq!(e.len(), 1);
        assert!(matches!(e[0].verdict, Verdict::Unsure | Verdict::Same), "{:?}", e[0].verdict);
        let e = compare(&rec(1.05, 1.0, 1.2), &rec(1.0, 0.9, 1.1), 0.02);
        assert!(matches!(e[0].verdict, Verdict::Unsure | Verdict::Same), "{:?}", e[0].verdict);
    }

    #[test]
    fn overlapping_noisy_runs_are_never_faster_or_slower() {
        // Medians 30 % apart, intervals overlapping: UNSURE, not SLOWER.
        assert_eq!(verdict(f(10.0, 4.0), f(13.0, 4.0), 0.02), Verdict::Unsure);
        assert_eq!(verdict(f(13.0, 4.0), f(10.0, 4.0), 0.02), Verdict::Unsure);
        assert_eq!(verdict(f(10.0, 4.0), f(10.1, 4.0), 0.02), Verdict::Same);
    }

    #[test]
    fn reports_compare_by_case_and_column() {
        let rec = |ms: f64| {
            serde_json::json!({"dtype": "float32", "shape": [2, 3], "pads": [1, 1], "mode": "edge",
                "gpu_kernel_ms": ms, "gpu_kernel_ci_low_ms": ms * 0.99, "gpu_kernel_ci_high_ms": ms * 1.01})
        };
        let old = serde_json::json!({ "records": [rec(1.0)] });
        let new = serde_json::json!({ "records": [rec(2.0)] });
        let e = compare(&old, &new, 0.02);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].column.as_str(), e[0].ratio, e[0].verdict), ("gpu_kernel_ms", 2.0, Verdict::Slower));
        assert_eq!(regressions(&e, 50.0).len(), 1);
        assert_eq!(regressions(&e, 150.0).len(), 0);
        assert!(compare(&old, &old, 0.02).iter().all(|e| e.verdict == Verdict::Same));
        // A gradient is another case than its pad.
        let mut back = rec(1.0);
        back["backward"] = serde_json::json!(true);
        assert!(compare(&old, &serde_json::json!({ "records": [back] }), 0.02).is_empty());
        // A figure a --steady-only run left out (0) is no figure: not 0x FASTER.
        let steady = serde_json::json!({ "records": [rec(0.0)] });
        assert!(compare(&old, &steady, 0.02).is_empty() && compare(&steady, &old, 0.02).is_empty());
    }
}
