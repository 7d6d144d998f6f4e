//! The gradient's cases (`cpu_pad`'s `backward/` group's) by the minimum of many calls:
//! `cpu::pad_backward`, `cpu::pad_backward_in` (an arena's memory) and the forward
//! `cpu::pad_into` of the same case called in turn, each one's minimum and median over a
//! round's calls, and the gradients' minima over the forward's. A busy machine (a VM's
//! neighbours) only adds time, so the minima move least where criterion's medians drift
//! between rounds: the A/B figures in the commits and the CHANGELOG are these.
//!
//! ```text
//! WGPU_PAD_CPU_THREADS=1 taskset -c 1 cargo run --release --example backward_minima -- [FILTER] [--calls N] [--rounds R]
//! ```
//!
//! FILTER keeps the cases whose `backward/NAME/MODE` contains it; `--calls` (default 200) a
//! round's calls of each, `--rounds` (default 3) the rounds, each case's in turn. `--alone`
//! makes a round each function's calls one after another rather than in turn: one function
//! repeated, as `benchmarks/jax_backward.py` times XLA (in turn, each call finds the caches
//! holding the others' bytes, a handicap the XLA side does not have).

use std::hint::black_box;
use std::time::Instant;

use wgpu_pad::{cpu, OutputArena};

#[path = "../benches/backward/mod.rs"]
mod backward;
use backward::{backward_case, BackwardCase, BACKWARD_CASES};

struct Args {
    filter: String,
    calls: usize,
    rounds: usize,
    alone: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args { filter: String::new(), calls: 200, rounds: 3, alone: false };
    while let Some(arg) = args.next() {
        let mut count = |flag: &str| {
            let value = args.next().ok_or(format!("{flag} needs a count"))?;
            match value.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{flag} needs a whole number above 0, got '{value}'")),
            }
        };
        match arg.as_str() {
            "--calls" => parsed.calls = count("--calls")?,
            "--rounds" => parsed.rounds = count("--rounds")?,
            "--alone" => parsed.alone = true,
            flag if flag.starts_with('-') => return Err(format!("unknown flag '{flag}'")),
            filter => parsed.filter = filter.to_string(),
        }
    }
    Ok(parsed)
}

/// A round's calls of one function: (minimum, median; the upper one of an even count).
fn min_median(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

/// A case's round: each function's (minimum, median) in µs, `pad_backward`'s, then
/// `pad_backward_in`'s, then `pad_into`'s, and the gradients' minima over the forward's.
fn report(case: &BackwardCase, round: usize, [backward, backward_in, forward]: [(f64, f64); 3]) -> String {
    format!(
        "backward/{}/{} round {round}: pad_backward min {:.2} median {:.2} µs | pad_backward_in min {:.2} median {:.2} µs | pad_into min {:.2} median {:.2} µs | minima over pad_into's {:.2} {:.2}",
        case.0,
        case.4,
        backward.0,
        backward.1,
        backward_in.0,
        backward_in.1,
        forward.0,
        forward.1,
        backward.0 / forward.0,
        backward_in.0 / forward.0,
    )
}

fn main() {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("backward_minima: {e}");
            std::process::exit(2);
        }
    };
    let threads = std::env::var("WGPU_PAD_CPU_THREADS").unwrap_or_else(|_| "unset".into());
    let order = if args.alone { "each function's calls in a row" } else { "the functions in turn" };
    println!("# {} calls a round, {} rounds, {order}; WGPU_PAD_CPU_THREADS {threads}", args.calls, args.rounds);
    let arena = OutputArena::new(1 << 30);
    for case in BACKWARD_CASES.iter().filter(|c| format!("backward/{}/{}", c.0, c.4).contains(&args.filter)) {
        let (plan, grad, input) = backward_case(case);
        let mut out = vec![0u8; plan.byte_sizes().expect("sizes that fit").1 as usize];
        for round in 1..=args.rounds {
            let mut times = [(); 3].map(|_| Vec::with_capacity(args.calls));
            let mut call = |f: usize| {
                let t = Instant::now();
                match f {
                    0 => drop(black_box(cpu::pad_backward(&plan, &grad).expect("a gradient"))),
                    1 => arena.recycle(black_box(cpu::pad_backward_in(&plan, &grad, &arena).expect("a gradient"))),
                    _ => cpu::pad_into(&plan, black_box(&input), &mut out).expect("a pad"),
                }
                times[f].push(t.elapsed().as_secs_f64() * 1e6);
            };
            match args.alone {
                true => (0..3).for_each(|f| (0..args.calls).for_each(|_| call(f))),
                false => (0..args.calls).for_each(|_| (0..3).for_each(&mut call)),
            }
            println!("{}", report(case, round, times.map(min_median)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn flags_are_read_and_bad_ones_named() {
        let a = args(&["224x224", "--calls", "5", "--rounds", "2", "--alone"]).unwrap();
        assert_eq!((a.filter.as_str(), a.calls, a.rounds, a.alone), ("224x224", 5, 2, true));
        let a = args(&[]).unwrap();
        assert_eq!((a.filter.as_str(), a.calls, a.rounds, a.alone), ("", 200, 3, false));
        for (bad, named) in [
            (&["--calls", "0"][..], "--calls"),
            (&["--rounds", "x"], "--rounds"),
            (&["--calls"], "--calls"),
            (&["--frob"], "--frob"),
        ] {
            let e = args(bad).err().unwrap_or_else(|| panic!("{bad:?} refused"));
            assert!(e.contains(named), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_round_is_its_minima_medians_and_their_ratios() {
        assert_eq!(min_median(vec![3.0, 1.0, 2.0]), (1.0, 2.0));
        assert_eq!(min_median(vec![4.0, 1.0, 3.0, 2.0]), (1.0, 3.0));
        let line = report(&BACKWARD_CASES[5], 2, [(3.0, 4.0), (2.4, 2.5), (2.0, 2.2)]);
        assert_eq!(
            line,
            "backward/f32_1x3x224x224_hw100/reflect round 2: pad_backward min 3.00 median 4.00 µs | \
             pad_backward_in min 2.40 median 2.50 µs | pad_into min 2.00 median 2.20 µs | minima over pad_into's 1.50 1.20"
        );
    }
}
