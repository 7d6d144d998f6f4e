//! Property tests: every path equals the per-element reference (SEMANTICS.md's formulas)
//! and the CPU path, over random ranks 0-8, shapes with zeros, negative and oversized pads,
//! axes, every mode and every width, and over long rows on ranks 1-3 (the CPU path's vector
//! code, the kernels' many-word rows).

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use wgpu_pad::{cpu, reference, DataType, Mode, PadPlan, PadRequest, Tensor};

/// One type per width, plus the CPU-only kinds.
const TYPES: [DataType; 9] = [
    DataType::Bool,
    DataType::Uint8,
    DataType::Float16,
    DataType::Float32,
    DataType::Int64,
    DataType::Complex128,
    DataType::Float8e5m2,
    DataType::Int4,
    DataType::String,
];

#[derive(Debug, Clone)]
struct Case {
    dtype: DataType,
    shape: Vec<usize>,
    pads: Vec<i64>,
    axes: Option<Vec<i64>>,
    mode: Mode,
    seed: u64,
    /// The constant's bits; `None`: the request gives none (the type's default).
    constant: Option<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    (0usize..=8).prop_flat_map(|rank| {
        // Keep outputs small: long pads on low ranks, short ones on high ranks.
        let (max_dim, max_pad) = match rank {
            0..=2 => (6usize, 20i64),
            3..=4 => (5, 6),
            _ => (3, 2),
        };
        (
            proptest::sample::select(&TYPES[..]),
            proptest::collection::vec(prop_oneof![1 => Just(0), 12 => 1..=max_dim], rank),
            proptest::collection::vec(prop_oneof![1 => -4..0i64, 3 => 0..=max_pad], 2 * rank),
            proptest::option::of(Just(rank)),
            proptest::sample::select(&Mode::ALL[..]),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|(dtype, shape, pads, axes_rank, mode, seed, constant, negative_axes)| {
                let rank = shape.len();
                // Axes: a rotation of 0..rank, half of it, some written negative.
                let axes = axes_rank.filter(|&r| r > 0).map(|r| {
                    let k = (seed as usize % r) + 1;
                    (0..k)
                        .map(|i| {
                            let a = ((i + seed as usize / 7) % r) as i64;
                            if negative_axes {
                                a - r as i64
                            } else {
                                a
                            }
                        })
                        .collect::<Vec<_>>()
                });
                let mut pads = match &axes {
                    Some(a) => pads[..2 * a.len()].to_vec(),
                    None => pads,
                };
                // Crop at most the axis's length in all, so most plans are valid; but now and
                // then crop one axis to nothing (valid for constant, refused otherwise) or past
                // its length (refused), so that those plans are drawn too.
                let k = pads.len() / 2;
                for i in 0..k {
                    let axis = axes.as_ref().map_or(i, |a| a[i].rem_euclid(rank as i64) as usize);
                    let n = shape[axis] as i64;
                    pads[i] = pads[i].max(-(n / 2));
                    pads[k + i] = pads[k + i].max(-(n - n / 2));
                    if i == 0 {
                        match seed % 16 {
                            0 => (pads[i], pads[k + i]) = (-(n / 2), -(n - n / 2)),
                            1 => (pads[i], pads[k + i]) = (-(n / 2), -(n - n / 2) - 1),
                            _ => {}
                        }
                    }
                }
                // One case in eight asks for no constant: the type's default (zero, or
                // float8e8m0's 0xFF, "" for strings).
                let constant = (constant % 8 != 0).then_some(constant);
                Case { dtype, shape, pads, axes, mode, seed, constant }
            })
    })
}

/// Long innermost rows on ranks 1-3, so that the CPU path's vector code runs (row ends
/// of a kept part of 16 bytes or more, copies of 2113 bytes on) and the GPU kernels' rows
/// span many words; short pads on the rows, a crop or a small pad outside.
fn long_rows() -> impl Strategy<Value = Case> {
    (1usize..=3).prop_flat_map(|rank| {
        (
            proptest::sample::select(&TYPES[..]),
            proptest::collection::vec(prop_oneof![1 => Just(0), 4 => 1..=3usize], rank - 1),
            prop_oneof![4 => 16..=80usize, 2 => 1..=16usize, 1 => 80..=3000usize],
            proptest::collection::vec(-1..=3i64, 2 * (rank - 1)),
            (-8..=20i64, -8..=20i64),
            proptest::sample::select(&Mode::ALL[..]),
            any::<u64>(),
            any::<u64>(),
        )
            .prop_map(move |(dtype, outer, row, outer_pads, (begin, end), mode, seed, constant)| {
                let mut shape = outer;
                shape.push(row);
                let k = rank - 1;
                let clamp = |p: i64, n: usize| p.max(-(n as i64 / 2));
                let mut pads: Vec<i64> = (0..k).map(|i| clamp(outer_pads[i], shape[i])).collect();
                pads.push(clamp(begin, row));
                pads.extend((0..k).map(|i| clamp(outer_pads[k + i], shape[i])));
                pads.push(clamp(end, row));
                let constant = (constant % 8 != 0).then_some(constant);
                Case { dtype, shape, pads, axes: None, mode, seed, constant }
            })
    })
}

/// Random data of the case's type.
fn input(c: &Case) -> Tensor {
    common::random_tensor(c.dtype, &c.shape, c.seed)
}

/// The default constant as ONNX's specification gives it, written out rather than taken from
/// the plan, so that the oracle does not share the paths' default: zero bits, "" for
/// strings, and float8e8m0's NaN (0xFF: 0.0 converted, as the corpus expects).
fn spec_default(dtype: DataType) -> Tensor {
    match dtype {
        DataType::String => Tensor::from_strings(vec![], vec![String::new()]).unwrap(),
        DataType::Float8e8m0 => Tensor::from_bytes(dtype, vec![], vec![0xff]).unwrap(),
        // 4-bit types: one element in a byte.
        t => Tensor::from_bytes(t, vec![], vec![0; t.storage_bytes(1).unwrap() as usize]).unwrap(),
    }
}

fn constant(c: &Case) -> Option<Tensor> {
    let bits = c.constant?;
    Some(match c.dtype {
        DataType::String => Tensor::from_strings(vec![], vec![format!("c{}", bits % 10)]).unwrap(),
        DataType::Bool => Tensor::from_bytes(c.dtype, vec![1], vec![(bits & 1) as u8]).unwrap(),
        DataType::Int4 => Tensor::from_bytes(c.dtype, vec![], vec![(bits & 0x0f) as u8]).unwrap(),
        t => {
            let w = t.width().bytes().unwrap();
            let bytes: Vec<u8> = bits.to_le_bytes().iter().cycle().take(w).copied().collect();
            Tensor::from_bytes(t, vec![1, 1], bytes).unwrap()
        }
    })
}

fn check(path: common::PadPath, cases: impl Strategy<Value = Case>, count: u32, refusals_required: bool) {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    let ran = AtomicU32::new(0);
    let (nonempty, skipped) = (AtomicU32::new(0), AtomicU32::new(0));
    let (refused, defaults) = (AtomicU32::new(0), AtomicU32::new(0));
    let (empty_axis, past_length) = (AtomicU32::new(0), AtomicU32::new(0));
    let rng = proptest::test_runner::TestRng::from_seed(
        proptest::test_runner::RngAlgorithm::ChaCha,
        &[common::proptest_seed().to_le_bytes(), [0; 8], [0; 8], [0; 8]].concat(),
    );
    let config = Config { cases: count, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&cases, |c| {
            let x = input(&c);
            let mut req = PadRequest::new(c.pads.clone()).mode(c.mode);
            if let Some(a) = &c.axes {
                req = req.axes(a.clone());
            }
            // The oracle's plan spells the default constant out (see spec_default).
            let oracle_req = match constant(&c) {
                Some(value) => {
                    req = req.constant(value.clone());
                    req.clone()
                }
                None => {
                    defaults.fetch_add(1, Relaxed);
                    req.clone().constant(spec_default(c.dtype))
                }
            };
            let plan = PadPlan::new(c.dtype, &c.shape, &req);
            let Ok(plan) = plan else {
                // Refusals are the plan's, shared by every path (the unit tests cover their
                // messages); those drawn here are the ones the generator aims at.
                let e = plan.unwrap_err();
                match e {
                    wgpu_pad::PadError::EmptyAxis { .. } => empty_axis.fetch_add(1, Relaxed),
                    wgpu_pad::PadError::NegativeOutputDim { .. } => past_length.fetch_add(1, Relaxed),
                    wgpu_pad::PadError::TooLarge { .. } => 0,
                    e => return Err(TestCaseError::fail(format!("an unexpected refusal: {e}"))),
                };
                refused.fetch_add(1, Relaxed);
                return Ok(());
            };
            prop_assume!(plan.out_len() <= 300_000);
            if let common::PadPath::Gpu(ctx) = path {
                if common::runs_the_default(ctx, &plan) {
                    skipped.fetch_add(1, Relaxed); // a variant's context: the default's runs cover it
                    return Ok(());
                }
            }
            ran.fetch_add(1, Relaxed);
            nonempty.fetch_add(u32::from(plan.out_len() > 0), Relaxed);
            let oracle = PadPlan::new(c.dtype, &c.shape, &oracle_req).unwrap();
            let want = reference::pad(&oracle, &x);
            let got = path.pad(&plan, &x).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got.shape(), want.shape());
            prop_assert!(got == want, "data differs from the reference");
            if let common::PadPath::Gpu(_) = path {
                prop_assert!(cpu::pad(&plan, &x).unwrap() == got, "GPU differs from CPU");
            }
            // The input is untouched.
            prop_assert!(x == input(&c));
            Ok(())
        })
        .unwrap();
    let (ran, nonempty, skipped) = (ran.into_inner(), nonempty.into_inner(), skipped.into_inner());
    let (refused, defaults) = (refused.into_inner(), defaults.into_inner());
    let (empty_axis, past_length) = (empty_axis.into_inner(), past_length.into_inner());
    eprintln!("{ran} of {count} cases padded, {nonempty} with non-empty outputs, {skipped} the default's program on a variant's context, {refused} refused ({empty_axis} an empty axis extended, {past_length} cropped past its length), {defaults} with the default constant");
    // One case in eight asks for the default constant: 64 cases or more miss it once in
    // 5,000 runs or less; the variants' runs of 48 (0.16 % each, 14 a test) are not held to it.
    assert!(defaults > 0 || count < 64, "no case took the default constant");
    if refusals_required {
        assert!(past_length > 0, "no case cropped an axis past its length");
        assert!(empty_axis > 0, "no case extended an empty axis in a mode that needs its elements");
    }
    // Guard against a generator whose cases the plan mostly refuses.
    assert!((nonempty + skipped) * 3 >= count, "only {nonempty} of {count} cases padded something");
}

test_each_path!(random_pads_match_reference, |path| check(path, case(), 384, true));
test_each_path!(long_rows_match_reference, |path| check(path, long_rows(), 128, false));

// Every kernel variant a real GPU is to decide between, on fewer cases each (the corpus and
// the window tests run them too), each case where it runs another program than the default's.
common::variant_shard_tests!(kernel_variants_match_reference, variants_match_reference);

fn variants_match_reference(shard: usize) {
    for (variant, ctx) in common::gpu_variant_shard(shard) {
        eprintln!("kernel variant {}", variant.name());
        check(common::PadPath::Gpu(ctx), case(), 96, false);
        check(common::PadPath::Gpu(ctx), long_rows(), 48, false);
    }
}
