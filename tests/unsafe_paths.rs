//! Pads that reach every `unsafe` block a CPU pad runs, few and small enough for Miri: the
//! output written without being zero-filled first, the SSSE3 row ends (short middles moved,
//! longer ones copied) and small planes, the AVX2 copy loop (rows of 2113 bytes and more), plain copies, and,
//! under Miri with two CPUs, outputs split across threads (there from 4 KiB: the pads of the
//! rows long enough for AVX2). (Not the GPU readback's copy, which `cpu`'s unit test
//! `readbacks_are_copied_whole` covers, `Tensor::zeros` or the huge-page advice, which a pad
//! does not run.)
//! Under Miri, which reports any byte read before it was written, any access out of bounds
//! and any data race (`.ci/miri` runs it in CI; FUZZING.md says more):
//!
//! ```text
//! MIRIFLAGS=-Zmiri-num-cpus=2 RUSTFLAGS="-C target-feature=+ssse3,+avx2" cargo +nightly miri test --test unsafe_paths
//! ```
//!
//! Miri sees only the CPU features enabled at compile time, hence the flags; without them it
//! runs the portable paths. Natively this is one more sweep against the reference.
//!
//! Under Miri the sweep is sampled so that CI's run fits its time: every type, mode, row
//! length and pad pair still comes, and every block above is still reached, but not every
//! combination of them. Built with `WGPU_PAD_MIRI_FULL=1` in the environment (`WGPU_PAD_MIRI_FULL=1
//! bash .ci/miri`), Miri runs all of it, as natively: do that after a change to `unsafe` code.

use wgpu_pad::{cpu, reference, DataType, ElementWidth, Mode, PadPlan, PadRequest, Tensor};

/// Whether to run every combination: natively, and under Miri when built with
/// `WGPU_PAD_MIRI_FULL` set (read at compile time: Miri hides the environment at run time).
const FULL: bool = !cfg!(miri) || option_env!("WGPU_PAD_MIRI_FULL").is_some();

/// Whether combination `indices` is run: all of them when [`FULL`], else one in `of`, chosen so
/// that each index's every value still comes (the indices' sum modulo `of`).
fn sampled(indices: &[usize], of: usize) -> bool {
    FULL || indices.iter().sum::<usize>() % of == 0
}

/// Pads `shape` by `pads` with the CPU path, allocating and into an output full of junk,
/// and checks both against the per-element reference.
fn check(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) {
    let count: usize = shape.iter().product();
    let x = if dtype == DataType::String {
        Tensor::from_strings(shape.to_vec(), (0..count).map(|i| format!("s{i}")).collect()).unwrap()
    } else {
        let n = dtype.storage_bytes(count as u64).unwrap() as usize;
        // Byte i is i * 37 + 11 (mod 256), copied in 256-byte periods: byte by byte it was
        // an eighth of the time under Miri.
        let period: Vec<u8> = (0..n.min(256)).map(|i| (i * 37 + 11) as u8).collect();
        let mut bytes: Vec<u8> = Vec::with_capacity(n);
        while bytes.len() < n {
            bytes.extend_from_slice(&period[..(n - bytes.len()).min(period.len())]);
        }
        if dtype.width() == ElementWidth::Bits4 && count % 2 == 1 {
            // The unused high nibble of an odd count's last byte is zero.
            *bytes.last_mut().unwrap() &= 0x0f;
        }
        Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap()
    };
    let what = format!("{dtype} {mode} {shape:?} padded by {pads:?}");
    let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).expect(&what);
    let want = reference::pad(&plan, &x);
    assert!(cpu::pad(&plan, &x).unwrap() == want, "{what}");
    if let (Some(input), Some(want)) = (x.bytes(), want.bytes()) {
        let mut out = vec![0xa5; want.len()];
        cpu::pad_into(&plan, input, &mut out).unwrap();
        assert!(out == want, "{what}, into an output of junk");
    }
}

#[test]
fn pads_through_the_unsafe_paths_equal_the_reference() {
    let dtypes = [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
        DataType::Complex128,
        DataType::Int4,
        DataType::String,
    ];
    for (d, dtype) in dtypes.into_iter().enumerate() {
        let w = dtype.width().bytes().unwrap_or(1);
        // Elements in the shuffles' 16 bytes.
        let sixteen_bytes = 16 / w;
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            // Rows of a few elements and around the shuffles' 16 bytes; pads on both sides,
            // one side, longer than the row (several periods), up to 16 bytes and just over;
            // crops where something is left; the outer axis padded or cropped.
            for (r, n) in [1, 3, 7, sixteen_bytes + 1, 2 * sixteen_bytes + 3].into_iter().enumerate() {
                let pairs =
                    [(1, 1), (2, 0), (0, 3), (-1, 2), (9, 13), (sixteen_bytes as i64, sixteen_bytes as i64 + 1)];
                for (p, (before, after)) in pairs.into_iter().enumerate() {
                    if (before < 0 && n == 1) || !sampled(&[d, m, r, p], 5) {
                        continue; // nothing left to pad from, or not in Miri's sample
                    }
                    let outer = if (before + after) % 2 == 0 { 1 } else { -1 };
                    check(dtype, &[2, n], &[outer, before, 0, after], mode);
                    check(dtype, &[n], &[before, after], mode);
                }
            }
            // Outer axes padded by many blocks (a mirror's descending run, copy by copy).
            check(dtype, &[3, 2, 2], &[7, 0, 1, 6, 2, 1], mode);
        }
    }
    // Small planes written whole by shuffles (SSSE3): enough of them that the estimate
    // takes them (rows of a few pixels, shuffled ends or not); the library's unit test
    // `cpu::planes::tests::planes_are_written_whole` has windows of every load count.
    // These outputs are split across threads under Miri, which is slow: a sample there.
    for (m, mode) in Mode::ALL.into_iter().enumerate() {
        // The sample: u8 constant (the constant or'd into shuffled windows), f32 reflect.
        if sampled(&[m + 4], 5) {
            check(DataType::Float32, &[96, 3, 3], &[0, 1, 1, 0, 1, 1], mode);
        }
        if sampled(&[m], 5) {
            check(DataType::Uint8, &[64, 4, 14], &[0, 1, 1, 0, 1, 1], mode);
        }
    }
    // Rows long enough for the AVX2 copy loop (2113 bytes and more); the copy is the same
    // for every type, so two will do (the sample: u8 constant, f32 wrap; threaded too).
    for (d, dtype) in [DataType::Uint8, DataType::Float32].into_iter().enumerate() {
        let w = dtype.width().bytes().unwrap();
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            if sampled(&[d * 2, m], 5) {
                check(dtype, &[2, 2200 / w], &[0, 3, 1, 5], mode);
            }
        }
    }
}
