//! Builds a plan from fuzzed pads, axes, shapes, modes and types (extreme values included),
//! and checks the CPU path (allocating, and into an output full of garbage) against the
//! per-element reference whenever the plan is valid.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wgpu_pad::{cpu, reference, DataType, Mode, PadError, PadPlan, PadRequest, Tensor};

fn pad_value(b: u8) -> i64 {
    match b {
        250 => i64::MAX,
        251 => i64::MIN,
        252 => 1 << 40,
        253 => -(1 << 40),
        254 => i64::MAX - 1,
        b => (b % 24) as i64 - 8,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let mut next = move || bytes.next().unwrap_or(0);
    let dtype = DataType::ALL[next() as usize % DataType::ALL.len()];
    let rank = next() as usize % 6;
    let shape: Vec<usize> = (0..rank)
        .map(|_| match next() {
            255 => 1 << 40,
            // Longer axes, so that rows reach the CPU path's vector code: the row-end
            // shuffles (a kept part of 16 bytes or more) and the copy loop (2113 bytes on).
            254 => 16 + next() as usize % 64,
            253 => 100 + next() as usize * 2,
            b => b as usize % 6,
        })
        .collect();
    let mode = Mode::ALL[next() as usize % 5];
    let axes: Option<Vec<i64>> =
        (next() % 3 == 0).then(|| (0..next() as usize % (rank + 2)).map(|_| (next() as i8 % 8) as i64).collect());
    let k = axes.as_ref().map_or(rank, |a| a.len());
    let pad_count = if next() % 16 == 0 { next() as usize % 12 } else { 2 * k };
    let pads: Vec<i64> = (0..pad_count).map(|_| pad_value(next())).collect();
    let seed = next();
    let constant_kind = next();

    // The input: only when the shape is small enough to exist.
    let count: usize = match shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)) {
        Some(n) if n <= 1 << 14 => n as usize,
        _ => {
            let _ = PadPlan::new(dtype, &shape, &PadRequest::new(pads).mode(mode)).map(|p| p.out_len());
            return;
        }
    };
    let input = match dtype {
        DataType::String => {
            Tensor::from_strings(shape.clone(), (0..count).map(|i| format!("{}", i as u8 ^ seed)).collect())
        }
        t => {
            let n = t.storage_bytes(count as u64).unwrap() as usize;
            let mut b: Vec<u8> = (0..n).map(|i| (i as u8).wrapping_mul(37) ^ seed).collect();
            if t.width() == wgpu_pad::ElementWidth::Bits4 && count % 2 == 1 {
                *b.last_mut().unwrap() &= 0x0f;
            }
            Tensor::from_bytes(t, shape.clone(), b)
        }
    }
    .expect("input fits its shape");
    let mut request = PadRequest::new(pads).mode(mode).max_output_bytes(1 << 20);
    if let Some(a) = axes {
        request = request.axes(a);
    }
    match constant_kind % 4 {
        0 => {}
        1 => {
            request = request.constant(
                wgpu_pad::literal::parse_value(dtype, "1")
                    .or_else(|_| wgpu_pad::literal::parse_value(dtype, "true"))
                    .unwrap_or_else(|_| Tensor::zeros(dtype, vec![]).unwrap()),
            )
        }
        2 => request = request.constant(Tensor::zeros(DataType::Int8, vec![1]).unwrap()),
        _ => request = request.constant(Tensor::zeros(dtype, vec![2]).unwrap()),
    }
    match PadPlan::new(dtype, &shape, &request) {
        Ok(plan) => {
            let want = reference::pad(&plan, &input);
            let got = match cpu::pad(&plan, &input) {
                // Strings' own bytes are known only when padding: they, with the String
                // headers, may exceed the limit that the plan could not check.
                Err(PadError::TooLarge { .. }) if dtype == DataType::String => {
                    let strings = want.strings().expect("a string tensor");
                    let held = strings.len() * std::mem::size_of::<String>();
                    let total = held + strings.iter().map(String::len).sum::<usize>();
                    assert!(
                        total as u64 > plan.max_output_bytes(),
                        "refused {total} bytes of strings within the limit"
                    );
                    return;
                }
                result => result.expect("a valid plan pads"),
            };
            assert!(got == want, "CPU path differs from the reference");
            assert_eq!(got.shape(), plan.out_shape());
            // Into an output full of garbage: every byte must be written (a fresh
            // allocation's zeros would hide a skipped zero pad).
            if let (Some(bytes), Some(want)) = (input.bytes(), want.bytes()) {
                let mut out = vec![0xa5u8; want.len()];
                cpu::pad_into(&plan, bytes, &mut out).expect("a valid plan pads into its output");
                assert!(out == want, "pad_into left or wrote bytes unlike the reference");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
