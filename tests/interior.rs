//! Interior padding (JAX's `lax.pad`, StableHLO's `pad`): the corpus made from the definition
//! by `tests/data/interior/generate.py` on every path that runs it, random plans against the
//! per-element reference, the gradient (a strided slice) against the scatter oracle, and the
//! GPU's paths refusing such plans with a typed error until they run them.

mod common;

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use wgpu_pad::gpu::{BufferRange, BufferView, DeviceLimits, ExecPath, Program};
use wgpu_pad::{cpu, fused, reference, DataType, PadError, PadPlan, PadRequest, Tensor};

#[test]
fn interior_corpus_on_cpu_path() {
    let cases = common::interior_cases();
    if !cases.is_empty() {
        common::check_count("interior corpus cases", cases.len(), 60, 1);
    }
    let failures = common::run_cases(&cases, |case, plan| cpu::pad(plan, &case.input));
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn interior_corpus_on_reference_and_into_bytes() {
    let cases = common::interior_cases();
    let failures = common::run_cases(&cases, |case, plan| Ok(reference::pad(plan, &case.input)));
    assert!(failures.is_empty(), "reference: {}", failures.join("\n"));
    // cpu::pad_into writes a caller's bytes, over whatever they held.
    let failures = common::run_cases(&cases, |case, plan| match plan.byte_sizes() {
        None => cpu::pad(plan, &case.input),
        Some((_, out)) => {
            let mut bytes = vec![0xa5; out as usize];
            cpu::pad_into(plan, case.input.bytes().unwrap(), &mut bytes)?;
            Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), bytes)
        }
    });
    assert!(failures.is_empty(), "pad_into: {}", failures.join("\n"));
}

/// The corpus through `GpuContext`, on the shared device and on one of 4 KiB bindings: every
/// fixed-width case on the GPU (or, past one binding, the CPU path, which says so).
#[test]
fn interior_corpus_on_gpu_path() {
    let cases = common::interior_cases();
    for gpu in [common::gpu(), common::gpu_small_bindings()].into_iter().flatten() {
        let small = gpu.device().limits().max_storage_buffer_binding_size == common::SMALL_BINDING;
        let mut on_gpu = 0;
        let failures = common::run_cases(&cases, |case, plan| {
            let padded = gpu.pad_blocking(plan, &case.input)?;
            match &padded.path {
                ExecPath::Gpu => on_gpu += 1,
                ExecPath::CpuFallback { reason } if !plan.dtype().gpu_capable() => {
                    assert!(reason.contains("no GPU kernel"))
                }
                ExecPath::CpuFallback { reason } if small => assert!(reason.contains("binding"), "{reason}"),
                other => panic!("{}: ran on {other:?}", case.name),
            }
            common::assert_no_gpu_errors();
            Ok(padded.tensor)
        });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        if !cases.is_empty() {
            common::check_count("interior corpus cases on the GPU", on_gpu, 40, 0);
        }
    }
}

fn interior_plan() -> PadPlan {
    PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![0, 1, 0, 0]).interior(vec![1, 0])).unwrap()
}

/// The fused functions take an interior plan: each axis's last word is its step (the count plus
/// one), 1 without; `Program` lays it out as one dispatch of its own kernel, and one past a
/// binding is a `GpuLimit` naming the binding.
#[test]
fn fused_functions_and_programs_take_interior_plans() {
    let plan = interior_plan();
    let words: Vec<u32> =
        fused::uniform_bytes(&plan).unwrap().chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    assert_eq!((words[7], words[15]), (2, 1), "{words:?}");
    assert!(fused::wgsl_baked(&plan, "pad_").unwrap().contains("pad_Axis(0u, 3u, 0u, 1u, 0u, 3u, 3u, 2u)"));
    let limits = DeviceLimits::WEBGPU_DEFAULT;
    let dense = |bytes: u64| BufferView::dense(0, bytes.next_multiple_of(4));
    let (i, o) = plan.byte_sizes().unwrap();
    let program = Program::new(&plan, &dense(i), &dense(o), &limits).unwrap();
    assert_eq!(program.dispatches().len(), 1);
    assert!(program.label(0).contains("interior"), "{}", program.label(0));
    // Interior counts of zero are an ONNX plan like any other: the default kernels.
    let zero =
        PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![0, 1, 0, 0]).interior(vec![0, 0])).unwrap();
    assert!(!Program::new(&zero, &dense(i), &dense(o), &limits).unwrap().label(0).contains("interior"));
    // 2^24 + 1 int32 dilated by 1, and one more: 2^25 + 2 elements, past a WebGPU binding:
    // windows of the axis, each binding inside the device's.
    let big = PadPlan::new(DataType::Int32, &[(1 << 24) + 1], &PadRequest::new(vec![0, 1]).interior(vec![1])).unwrap();
    let (i, o) = big.byte_sizes().unwrap();
    let limits = DeviceLimits { max_buffer: 1 << 40, ..limits };
    let program = Program::new(&big, &dense(i), &dense(o), &limits).unwrap();
    assert_eq!(program.dispatches().len(), 2);
    for d in program.dispatches() {
        assert!(d.output().1 <= limits.max_binding && d.input().unwrap().1 <= limits.max_binding, "{d:?}");
    }
    // 8-bit windows start on a word: an output at an odd byte has none, a GpuLimit.
    let bytes =
        PadPlan::new(DataType::Uint8, &[(1 << 27) + 1], &PadRequest::new(vec![0, 1]).interior(vec![1])).unwrap();
    let odd = BufferView { offset: 1, strides: None, end: (1 << 28) + 8, buffer_size: (1 << 28) + 8 };
    let e = Program::new(&bytes, &dense((1 << 27) + 1), &odd, &limits).unwrap_err();
    assert!(matches!(e, PadError::GpuLimit { limit: wgpu_pad::GpuLimit::Windows, .. }), "{e}");
    // At byte 257, its output (bytes 257 to 2^28 + 259) binds whole words from byte 256:
    // 2^28 + 4 bytes.
    let at_257 = BufferView { offset: 257, end: (1 << 28) + 264, buffer_size: (1 << 28) + 264, ..odd };
    let e = Program::new(&bytes, &dense((1 << 27) + 1), &at_257, &limits).unwrap_err();
    let says =
        format!("output view needs a binding of {} bytes; the device binds at most {}", (1u64 << 28) + 4, 1u64 << 27);
    assert!(e.to_string().contains(&says), "{e}");
    let at_zero = BufferView { offset: 0, ..odd };
    assert!(Program::new(&bytes, &dense((1 << 27) + 1), &at_zero, &limits).unwrap().dispatches().len() > 1);
}

/// Through `PadKernel` into views at offsets in larger buffers: an 8-bit output at an odd byte
/// (the bytes around it kept), a 16-bit input at an odd element, a complex128 input one element
/// in and its output every other element; each bit for bit the CPU path's.
#[test]
fn interior_pads_through_views_at_offsets_and_strides() {
    let Some(gpu) = common::gpu() else { return };
    let (device, queue) = (gpu.device(), gpu.queue());
    let run = |plan: &PadPlan, x: &Tensor, in_at: u64, out_at: u64, out_strides: Option<&[u64]>, out_size: u64| {
        let mut staged = vec![0x77u8; in_at as usize];
        staged.extend_from_slice(x.bytes().unwrap());
        staged.resize(staged.len().next_multiple_of(4), 0x77);
        let input = common::storage(gpu, &staged);
        let output = common::storage(gpu, &vec![0xeeu8; out_size as usize]);
        let mut out = wgpu_pad::gpu::BufferRange::at(&output, out_at);
        if let Some(s) = out_strides {
            out = out.with_strides(s);
        }
        let mut enc = device.create_command_encoder(&Default::default());
        gpu.kernel().encode(&mut enc, plan, wgpu_pad::gpu::BufferRange::at(&input, in_at), out).unwrap();
        queue.submit([enc.finish()]);
        common::assert_no_gpu_errors();
        common::read_whole(gpu, &output)
    };
    // uint8 [3, 5] by (1, 1, 1), (-1, 2, 2) into byte 3 onwards of 64.
    let request = PadRequest::from_padding_config(&[(1, 1, 1), (-1, 2, 2)])
        .constant(Tensor::from_bytes(DataType::Uint8, vec![], vec![9]).unwrap());
    let plan = PadPlan::new(DataType::Uint8, &[3, 5], &request).unwrap();
    let x = common::pattern(DataType::Uint8, &[3, 5], 1);
    let want = cpu::pad(&plan, &x).unwrap();
    let n = want.bytes().unwrap().len();
    let got = run(&plan, &x, 0, 3, None, 108);
    assert_eq!(&got[3..3 + n], want.bytes().unwrap());
    assert!(got[..3].iter().chain(&got[3 + n..]).all(|&b| b == 0xee), "bytes outside the output changed");
    // float16 read from element 3 of its buffer.
    let plan =
        PadPlan::new(DataType::Float16, &[4, 3], &PadRequest::from_padding_config(&[(0, -1, 2), (2, 0, 1)])).unwrap();
    let x = common::pattern(DataType::Float16, &[4, 3], 2);
    let want = cpu::pad(&plan, &x).unwrap();
    let got = run(&plan, &x, 6, 0, None, want.bytes().unwrap().len().next_multiple_of(4) as u64);
    assert_eq!(&got[..want.bytes().unwrap().len()], want.bytes().unwrap());
    // complex128 written every other element: the gaps keep their bytes.
    let plan =
        PadPlan::new(DataType::Complex128, &[2, 2], &PadRequest::from_padding_config(&[(1, 0, 1), (0, 1, 2)])).unwrap();
    let x = common::pattern(DataType::Complex128, &[2, 2], 3);
    let want = cpu::pad(&plan, &x).unwrap();
    let (rows, cols) = (plan.out_shape()[0], plan.out_shape()[1]);
    let strides = [2 * cols as u64, 2];
    let got = run(&plan, &x, 16, 16, Some(&strides), 16 + (2 * rows * cols * 16) as u64);
    for (e, want) in want.bytes().unwrap().chunks(16).enumerate() {
        let at = 16 + 2 * e * 16;
        assert_eq!(&got[at..at + 16], want, "element {e}");
        assert!(got[at + 16..at + 32].iter().all(|&b| b == 0xee), "gap after element {e} written");
    }
}

#[derive(Debug, Clone)]
struct Case {
    dtype: DataType,
    shape: Vec<usize>,
    /// (low, high, interior) per axis.
    config: Vec<(i64, i64, i64)>,
    seed: u64,
    constant: bool,
}

const TYPES: [DataType; 8] = [
    DataType::Bool,
    DataType::Uint8,
    DataType::Float16,
    DataType::Float32,
    DataType::Int64,
    DataType::Complex128,
    DataType::Uint4,
    DataType::String,
];

fn case() -> impl Strategy<Value = Case> {
    (0usize..=4).prop_flat_map(|rank| {
        (
            proptest::sample::select(&TYPES[..]),
            proptest::collection::vec(prop_oneof![1 => Just(0usize), 2 => Just(1), 6 => 2..=5usize], rank),
            proptest::collection::vec(
                (crop_or_pad(), crop_or_pad(), prop_oneof![2 => Just(0i64), 3 => 1..=3i64]),
                rank,
            ),
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|(dtype, shape, config, seed, constant)| Case { dtype, shape, config, seed, constant })
    })
}

/// Mostly pads, now and then a crop (into the dilation, or past it).
fn crop_or_pad() -> impl Strategy<Value = i64> {
    prop_oneof![3 => 0..=4i64, 1 => -6..0i64]
}

fn random_input(c: &Case) -> Tensor {
    common::random_tensor(c.dtype, &c.shape, c.seed)
}

fn request(c: &Case) -> PadRequest {
    let mut r = PadRequest::from_padding_config(&c.config);
    if c.constant {
        let v = match c.dtype {
            DataType::String => Tensor::from_strings(vec![], vec!["v".into()]).unwrap(),
            DataType::Bool | DataType::Uint4 => Tensor::from_bytes(c.dtype, vec![], vec![1]).unwrap(),
            // Bytes that differ, so that a fill must repeat the whole element.
            t => Tensor::from_bytes(t, vec![], (0..t.width().bytes().unwrap() as u8).map(|i| 0x5a ^ i).collect())
                .unwrap(),
        };
        r = r.constant(v);
    }
    r
}

fn runner() -> TestRunner {
    let rng = proptest::test_runner::TestRng::from_seed(
        proptest::test_runner::RngAlgorithm::ChaCha,
        &[common::proptest_seed().to_le_bytes(), [0; 8], [0; 8], [0; 8]].concat(),
    );
    TestRunner::new_with_rng(Config { cases: 600, failure_persistence: None, ..Config::default() }, rng)
}

/// Random plans with interior padding, crops into the dilation and past it, empty and
/// one-element axes, every kind of element: the CPU path is the reference's, bit for bit, and
/// a plan one refuses the other refuses alike.
#[test]
fn random_interior_plans_match_the_reference() {
    let (ran, refused) = (AtomicU32::new(0), AtomicU32::new(0));
    runner()
        .run(&case(), |c| {
            let x = random_input(&c);
            match PadPlan::new(c.dtype, &c.shape, &request(&c)) {
                Err(e) => {
                    prop_assert!(matches!(e, PadError::Interior { .. } | PadError::NegativeOutputDim { .. }), "{e}");
                    refused.fetch_add(1, Relaxed);
                }
                Ok(plan) => {
                    ran.fetch_add(1, Relaxed);
                    prop_assert_eq!(cpu::pad(&plan, &x).unwrap(), reference::pad(&plan, &x));
                }
            }
            Ok(())
        })
        .unwrap();
    let (ran, refused) = (ran.into_inner(), refused.into_inner());
    eprintln!("{ran} plans ran, {refused} refused");
    assert!(ran > 300 && refused > 10, "{ran} ran, {refused} refused");
}

/// The gradient of a dilated input is the output gradient's strided slice: each input element
/// has one image at most, so the scatter oracle's sums are exact and the bits must agree.
#[test]
fn interior_gradients_are_the_strided_slice() {
    let ran = AtomicU32::new(0);
    let floats = [DataType::Float32, DataType::Float16, DataType::Complex64, DataType::Float64];
    runner()
        .run(&(case(), 0..floats.len()), |(mut c, t)| {
            c.dtype = floats[t];
            let Ok(plan) = PadPlan::new(c.dtype, &c.shape, &PadRequest::from_padding_config(&c.config)) else {
                return Ok(());
            };
            // Finite values: small integers over 8, in every part.
            let n = plan.out_len() * if c.dtype == DataType::Complex64 { 2 } else { 1 };
            let values: Vec<f64> = (0..n).map(|i| ((i as u64 * 7 + c.seed) % 61) as f64 / 8.0 - 3.0).collect();
            let bytes: Vec<u8> = match c.dtype {
                DataType::Float16 => values.iter().flat_map(|&v| half::f16::from_f64(v).to_le_bytes()).collect(),
                DataType::Float64 => values.iter().flat_map(|&v| v.to_le_bytes()).collect(),
                _ => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
            };
            let grad_out = Tensor::from_bytes(c.dtype, plan.out_shape().to_vec(), bytes).unwrap();
            prop_assert_eq!(
                cpu::pad_backward(&plan, &grad_out).unwrap(),
                reference::backward_by_scatter(&plan, &grad_out)
            );
            ran.fetch_add(1, Relaxed);
            Ok(())
        })
        .unwrap();
    assert!(ran.load(Relaxed) > 300, "{ran:?}");
}

/// Integer tensors have no gradient, interior padding or not; a hand-checked gradient, on the
/// CPU and the GPU.
#[test]
fn interior_gradients_refuse_integers_and_run_on_both_paths() {
    let request = PadRequest::from_padding_config(&[(1, -1, 2)]);
    let plan = PadPlan::new(DataType::Int32, &[3], &request).unwrap();
    let grad = Tensor::from_slice(DataType::Int32, vec![7], &[1i32; 7]).unwrap();
    assert!(matches!(cpu::pad_backward(&plan, &grad), Err(PadError::Unsupported { .. })));
    // Every entry point refuses them by name, the GPU's too (no "gradient" of an int32 moved as
    // 32-bit words): int32, bool, float8e8m0 (a float with no zero), a 64-bit integer.
    for dtype in [DataType::Int32, DataType::Bool, DataType::Float8e8m0, DataType::Uint64] {
        let plan = PadPlan::new(dtype, &[3], &request).unwrap();
        let w = dtype.width().bytes().unwrap();
        let grad = Tensor::from_bytes(dtype, vec![7], vec![0; 7 * w]).unwrap();
        let unsupported = |e: &PadError| matches!(e, PadError::Unsupported { dtype: d, .. } if *d == dtype.name());
        let e = cpu::pad_backward(&plan, &grad).unwrap_err();
        assert!(unsupported(&e), "{dtype}: {e}");
        let (i, o) = plan.byte_sizes().unwrap();
        let views = (BufferView::dense(0, o.next_multiple_of(4)), BufferView::dense(0, i.next_multiple_of(4)));
        let e = Program::backward(&plan, &views.0, &views.1, &DeviceLimits::WEBGPU_DEFAULT).unwrap_err();
        assert!(unsupported(&e), "{dtype}: {e}");
        let Some(gpu) = common::gpu() else { continue };
        let e = gpu.pad_backward_blocking(&plan, &grad).unwrap_err();
        assert!(unsupported(&e), "{dtype}: {e}");
        let e = gpu.kernel().check_backward(&plan).unwrap_err();
        assert!(unsupported(&e), "{dtype}: {e}");
        let (src, dst) = (common::storage(gpu, grad.bytes().unwrap()), common::storage(gpu, &vec![0; 3 * w]));
        let e = gpu
            .kernel()
            .prepare_backward(&plan, BufferRange::new(&src, 0, o.next_multiple_of(4)), BufferRange::at(&dst, 0))
            .unwrap_err();
        assert!(unsupported(&e), "{dtype}: {e}");
    }
    let plan = PadPlan::new(DataType::Float32, &[3], &request).unwrap();
    let grad = Tensor::from_slice(DataType::Float32, vec![7], &[1f32, 2., 3., 4., 5., 6., 7.]).unwrap();
    // Input i sits at 1 + 3i: 1, 4 and 7, the last cropped by the end's -1.
    let want = [2f32, 5., 0.];
    assert_eq!(cpu::pad_backward(&plan, &grad).unwrap().as_slice::<f32>().unwrap(), &want);
    let Some(gpu) = common::gpu() else { return };
    let got = gpu.pad_backward_blocking(&plan, &grad).unwrap();
    assert_eq!(got.path, ExecPath::Gpu);
    assert_eq!(got.tensor.as_slice::<f32>().unwrap(), &want);
}

/// Strings' text counts against the output's limit exactly as for an edge pad: the constant
/// where it lands, each kept string once.
#[test]
fn interior_strings_fit_the_output_limit_exactly() {
    let x = Tensor::from_strings(vec![2], vec!["abc".into(), "de".into()]).unwrap();
    let held = 4 * std::mem::size_of::<String>() as u64;
    let four = Tensor::from_strings(vec![], vec!["four".into()]).unwrap();
    // "abc" . . "de": 5 bytes of text and two constants of 4.
    let request =
        |limit: u64| PadRequest::new(vec![0, 0]).interior(vec![2]).constant(four.clone()).max_output_bytes(limit);
    let plan = PadPlan::new(DataType::String, &[2], &request(held + 13)).unwrap();
    let y = cpu::pad(&plan, &x).unwrap();
    assert_eq!(y.data(), &wgpu_pad::TensorData::Strings(vec!["abc".into(), "four".into(), "four".into(), "de".into()]));
    let plan = PadPlan::new(DataType::String, &[2], &request(held + 12)).unwrap();
    let e = cpu::pad(&plan, &x).unwrap_err();
    assert!(matches!(e, PadError::OutputLimit { .. }), "{e}");
}

/// Random interior plans on the GPU, bit for bit the reference's: every width (8- to 128-bit),
/// crops into the dilation, empty and one-element axes.
#[test]
fn random_interior_plans_on_the_gpu() {
    let Some(gpu) = common::gpu() else { return };
    let ran = AtomicU32::new(0);
    let mut runner = runner();
    runner
        .run(&case().prop_filter("the GPU's types", |c| c.dtype.gpu_capable()), |c| {
            let x = random_input(&c);
            let Ok(plan) = PadPlan::new(c.dtype, &c.shape, &request(&c)) else { return Ok(()) };
            prop_assert_eq!(common::PadPath::Gpu(gpu).pad(&plan, &x).unwrap(), reference::pad(&plan, &x));
            ran.fetch_add(1, Relaxed);
            Ok(())
        })
        .unwrap();
    assert!(ran.load(Relaxed) > 200, "{ran:?}");
}

/// The gradient on the GPU, every float type (a strided slice moves bits, whatever the type):
/// the CPU path's bits.
#[test]
fn interior_gradients_on_the_gpu_are_the_cpus() {
    let Some(gpu) = common::gpu() else { return };
    let floats = [
        DataType::Float32,
        DataType::Float16,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::Float8e4m3fn,
    ];
    let ran = AtomicU32::new(0);
    runner()
        .run(&(case(), 0..floats.len()), |(mut c, t)| {
            c.dtype = floats[t];
            let Ok(plan) = PadPlan::new(c.dtype, &c.shape, &PadRequest::from_padding_config(&c.config)) else {
                return Ok(());
            };
            let w = c.dtype.width().bytes().unwrap();
            let bytes: Vec<u8> = (0..plan.out_len() * w).map(|i| (i as u64 * 37 + c.seed) as u8 & 0x3f).collect();
            let grad_out = Tensor::from_bytes(c.dtype, plan.out_shape().to_vec(), bytes).unwrap();
            let got = gpu.pad_backward_blocking(&plan, &grad_out).unwrap();
            if plan.has_interior() {
                prop_assert_eq!(&got.path, &ExecPath::Gpu);
            }
            prop_assert_eq!(got.tensor, cpu::pad_backward(&plan, &grad_out).unwrap());
            ran.fetch_add(1, Relaxed);
            Ok(())
        })
        .unwrap();
    assert!(ran.load(Relaxed) > 300, "{ran:?}");
}

/// Past a binding (a device of 4 KiB bindings), windows of an axis: several dispatches, bit for
/// bit the CPU path's, every width, with crops into the dilation and runs no input lands in.
#[test]
fn interior_pads_past_a_binding_run_in_windows() {
    let Some(gpu) = common::gpu_small_bindings() else { return };
    // Rows past a binding on their own: windows of the inner axis, each of one outer index
    // (every other one the constant), the last case.
    type Case = (DataType, &'static [usize], &'static [(i64, i64, i64)]);
    let cases: [Case; 6] = [
        (DataType::Float32, &[40, 9], &[(1, -2, 2), (0, 1, 1)]),
        (DataType::Uint8, &[30, 50], &[(0, 3, 1), (2, 0, 1)]),
        (DataType::Float16, &[3, 20, 26], &[(0, 0, 0), (-3, 60, 2), (1, 1, 0)]),
        (DataType::Complex128, &[9, 4], &[(0, 0, 3), (1, 1, 1)]),
        (DataType::Int64, &[1, 200], &[(0, 0, 0), (0, 0, 2)]),
        (DataType::Float32, &[3, 300], &[(1, 0, 1), (0, -7, 0)]),
    ];
    for (dtype, shape, config) in cases {
        let plan = PadPlan::new(dtype, shape, &PadRequest::from_padding_config(config)).unwrap();
        assert!(plan.byte_sizes().unwrap().1 > common::SMALL_BINDING, "{dtype} {shape:?}: fits one binding");
        let x = common::pattern(dtype, shape, 5);
        let (got, dispatches) = common::pad_on_kernel(gpu, &plan, &x);
        assert!(dispatches > 1, "{dtype} {shape:?}: {dispatches} dispatch");
        assert_eq!(got, cpu::pad(&plan, &x).unwrap().bytes().unwrap(), "{dtype} {shape:?}");
        let padded = gpu.pad_blocking(&plan, &x).unwrap();
        assert_eq!(padded.path, ExecPath::Gpu, "{dtype} {shape:?}");
    }
    // The 8-bit case's windows (rows of 101 bytes): each starts on a word, so no two write one,
    // and together they hold the output's elements once.
    let plan = PadPlan::new(DataType::Uint8, &[30, 50], &PadRequest::from_padding_config(cases[1].2)).unwrap();
    let limits = DeviceLimits::from(&gpu.device().limits());
    let (i, o) = plan.byte_sizes().unwrap();
    let dense = |bytes: u64| BufferView::dense(0, bytes.next_multiple_of(4));
    let program = Program::new(&plan, &dense(i), &dense(o), &limits).unwrap();
    let word = |p: &[u8], at: usize| u32::from_le_bytes(p[4 * at..4 * at + 4].try_into().unwrap()) as u64;
    let mut elems = 0;
    for d in program.dispatches() {
        // Params: rank, count, first (element 0's place in the binding), elems.
        let start = d.output().0 + word(d.params(), 2);
        assert_eq!(start % 4, 0, "a window starts at byte {start}");
        elems += word(d.params(), 3);
    }
    assert_eq!((program.dispatches().len() > 1, elems), (true, plan.out_len() as u64));
    // 16-bit rows of an odd number of elements: every window would share a word with the
    // next, so none is made; GpuContext pads it on the CPU path, and says why.
    let plan = PadPlan::new(
        DataType::Float16,
        &[3, 20, 25],
        &PadRequest::from_padding_config(&[(0, 0, 0), (-3, 60, 2), (1, 1, 0)]),
    )
    .unwrap();
    let x = common::pattern(DataType::Float16, &[3, 20, 25], 6);
    let padded = gpu.pad_blocking(&plan, &x).unwrap();
    assert!(
        matches!(&padded.path, ExecPath::CpuFallback { reason } if reason.contains("binding")),
        "{:?}",
        padded.path
    );
    assert_eq!(padded.tensor, cpu::pad(&plan, &x).unwrap());
    common::assert_no_gpu_errors();
}

/// A gradient's output is grad_in, the input's size: the forward's cap on its output does not
/// bound it, on any entry point. [1000] dilated by 1 and cropped to its last 9 places keeps
/// 5 elements; the cap of 100 bytes holds the output (36 bytes), not grad_in (4,000).
#[test]
fn an_interior_gradient_is_not_held_to_the_forwards_output_cap() {
    let request = PadRequest::new(vec![-1990, 0]).interior(vec![1]).max_output_bytes(100);
    let plan = PadPlan::new(DataType::Float32, &[1000], &request).unwrap();
    assert_eq!(plan.out_shape(), &[9]);
    let grad_out = Tensor::from_slice(DataType::Float32, vec![9], &[1f32, 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
    let want = cpu::pad_backward(&plan, &grad_out).unwrap();
    // Input 995 + k sits at place 2k: grad_out's 1, 3, 5, 7 and 9.
    assert_eq!(&want.as_slice::<f32>().unwrap()[995..], &[1., 3., 5., 7., 9.]);
    let program =
        Program::backward(&plan, &BufferView::dense(0, 36), &BufferView::dense(0, 4000), &DeviceLimits::WEBGPU_DEFAULT);
    assert!(program.is_ok(), "{program:?}");
    let Some(gpu) = common::gpu() else { return };
    let got = gpu.pad_backward_blocking(&plan, &grad_out).unwrap();
    assert_eq!((got.path, got.tensor), (ExecPath::Gpu, want.clone()));
    let (src, dst) = (common::storage(gpu, grad_out.bytes().unwrap()), common::storage(gpu, &[0xff; 4000]));
    let pad =
        gpu.kernel().prepare_backward(&plan, BufferRange::new(&src, 0, 36), BufferRange::new(&dst, 0, 4000)).unwrap();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    pad.record(&mut encoder.begin_compute_pass(&Default::default()));
    gpu.queue().submit([encoder.finish()]);
    assert_eq!(common::read(gpu, &dst, 0, 4000), want.bytes().unwrap());
}

/// 8- and 16-bit interior pads into strided outputs whose rows move in whole 4-byte words (as
/// the plain pad takes them): int8 [3, 4] to [3, 8] into rows 16 bytes apart, float16 [2, 3]
/// to [2, 6] into rows 10 elements apart at byte 8, a rank-3 uint8 one with a gap between its
/// planes; the CPU's bits, the gaps kept. Views no word layout fits are refused saying why.
#[test]
fn narrow_interior_pads_write_rows_of_whole_words() {
    let Some(gpu) = common::gpu() else { return };
    // Type, shape, padding config, the output's strides and byte offset.
    type Case = (DataType, &'static [usize], &'static [(i64, i64, i64)], &'static [u64], u64);
    let cases: [Case; 3] = [
        (DataType::Int8, &[3, 4], &[(0, 0, 0), (0, 1, 1)], &[16, 1], 0),
        (DataType::Float16, &[2, 3], &[(0, 0, 0), (1, 0, 1)], &[10, 1], 8),
        (DataType::Uint8, &[2, 2, 3], &[(1, 0, 1), (0, 1, 0), (2, 1, 1)], &[44, 8, 1], 4),
    ];
    for (dtype, shape, config, strides, offset) in cases {
        let request = PadRequest::from_padding_config(config)
            .constant(Tensor::from_bytes(dtype, vec![], vec![0x5a; dtype.width().bytes().unwrap()]).unwrap());
        let plan = PadPlan::new(dtype, shape, &request).unwrap();
        let x = common::pattern(dtype, shape, 4);
        let want = cpu::pad(&plan, &x).unwrap();
        let w = dtype.width().bytes().unwrap();
        let out_shape = plan.out_shape();
        let span: u64 = out_shape.iter().zip(strides).map(|(&n, &s)| (n as u64 - 1) * s).sum::<u64>() + 1;
        let size = (offset + span * w as u64 + 12).next_multiple_of(4);
        let input = common::storage(gpu, x.bytes().unwrap());
        let output = common::storage(gpu, &vec![0xee; size as usize]);
        let out = BufferRange::at(&output, offset).with_strides(strides);
        let mut enc = gpu.device().create_command_encoder(&Default::default());
        let encoded = gpu.kernel().encode(&mut enc, &plan, BufferRange::at(&input, 0), out);
        encoded.unwrap_or_else(|e| panic!("{dtype} {shape:?} into strides {strides:?}: {e}"));
        gpu.queue().submit([enc.finish()]);
        let got = common::read_whole(gpu, &output);
        let written = common::gather(&got[offset as usize..], w, out_shape, strides);
        assert_eq!(written, want.bytes().unwrap(), "{dtype} {shape:?} into strides {strides:?}");
        // Every byte outside the view's elements kept.
        let mut inside = vec![false; size as usize];
        for e in 0..plan.out_len() {
            let mut rest = e;
            let mut at = 0u64;
            for (&n, &s) in out_shape.iter().zip(strides).rev() {
                at += (rest % n) as u64 * s;
                rest /= n;
            }
            let byte = (offset + at * w as u64) as usize;
            inside[byte..byte + w].iter_mut().for_each(|b| *b = true);
        }
        assert!(got.iter().zip(&inside).all(|(&b, &i)| i || b == 0xee), "{dtype}: bytes outside the view changed");
    }
    common::assert_no_gpu_errors();
    // Refused, each for what it breaks: rows of 6 bytes (not whole words), elements 2 apart,
    // a stride that starts rows mid-word, a view starting mid-word.
    let plan =
        PadPlan::new(DataType::Uint8, &[2, 3], &PadRequest::from_padding_config(&[(0, 0, 0), (0, 1, 1)])).unwrap();
    let limits = DeviceLimits::WEBGPU_DEFAULT;
    for (strides, offset, reason) in
        [(&[8u64, 1][..], 0, "rows of 6 elements are not whole words"), (&[12, 2], 0, "axis 1 (the last) has stride 2")]
    {
        let out = BufferView { offset, strides: Some(strides), end: 64, buffer_size: 64 };
        let e = Program::new(&plan, &BufferView::dense(0, 8), &out, &limits).unwrap_err();
        assert!(matches!(e, PadError::InvalidView { .. }) && e.to_string().contains(reason), "{strides:?}: {e}");
    }
    let plan =
        PadPlan::new(DataType::Uint8, &[2, 2], &PadRequest::from_padding_config(&[(0, 0, 0), (0, 1, 1)])).unwrap();
    for (strides, offset, reason) in [
        (&[6u64, 1][..], 0, "axis 0 has stride 6, which starts rows mid-word"),
        (&[8, 1], 2, "the view starts at byte 2, mid-word"),
    ] {
        let out = BufferView { offset, strides: Some(strides), end: 64, buffer_size: 64 };
        let e = Program::new(&plan, &BufferView::dense(0, 4), &out, &limits).unwrap_err();
        assert!(matches!(e, PadError::InvalidView { .. }) && e.to_string().contains(reason), "{strides:?}: {e}");
    }
}

/// The gradient of an 8- or 16-bit interior pad into a grad_in view with gaps inside its words
/// (every other element, rows 10 apart: the default kernels write no such view), as any other
/// gradient takes it: the gradient's kernel, each kept element its one term's bits (random
/// bytes: NaN payloads, signalling NaNs, -0.0 among them), the cropped ones +0.0, the gaps
/// kept; the CPU's bits, through PadKernel::prepare_backward and Program::backward.
#[test]
fn narrow_interior_gradients_write_views_with_gaps() {
    let Some(gpu) = common::gpu() else { return };
    let types = [DataType::Float16, DataType::Bfloat16, DataType::Float8e4m3fn, DataType::Float8e5m2fnuz];
    let configs: [&[(i64, i64, i64)]; 3] =
        [&[(0, 0, 1), (0, 0, 2)], &[(1, -1, 1), (-1, 2, 2)], &[(-2, 0, 1), (2, -5, 2)]];
    let strides = [10u64, 2];
    for (dtype, config) in types.iter().flat_map(|&t| configs.iter().map(move |&c| (t, c))) {
        let plan = PadPlan::new(dtype, &[3, 5], &PadRequest::from_padding_config(config)).unwrap();
        let w = dtype.width().bytes().unwrap();
        let bytes: Vec<u8> = (0..plan.out_len() * w).map(|i| ((i as u64 * 0x9e37_79b9) >> 7) as u8).collect();
        let grad_out = Tensor::from_bytes(dtype, plan.out_shape().to_vec(), bytes).unwrap();
        let want = cpu::pad_backward(&plan, &grad_out).unwrap();
        let what = format!("{dtype} {config:?}");
        let in_bytes = 32 * w as u64;
        let program = Program::backward(
            &plan,
            &BufferView::dense(0, (plan.out_len() * w).next_multiple_of(4) as u64),
            &BufferView { offset: 0, strides: Some(&strides), end: in_bytes, buffer_size: in_bytes },
            &DeviceLimits::WEBGPU_DEFAULT,
        );
        assert!(program.is_ok(), "{what}: {program:?}");
        let src = common::storage(gpu, grad_out.bytes().unwrap());
        let dst = common::storage(gpu, &vec![0xa5; in_bytes as usize]);
        let out_size = (plan.out_len() * w).next_multiple_of(4) as u64;
        let pad = gpu
            .kernel()
            .prepare_backward(
                &plan,
                BufferRange::new(&src, 0, out_size),
                BufferRange::at(&dst, 0).with_strides(&strides),
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        pad.record(&mut encoder.begin_compute_pass(&Default::default()));
        gpu.queue().submit([encoder.finish()]);
        let got = common::read_whole(gpu, &dst);
        assert_eq!(common::gather(&got, w, &[3, 5], &strides), want.bytes().unwrap(), "{what}");
        // The view holds the even elements below 30.
        let gaps = (0..32).filter(|&e| e % 2 == 1 || e >= 30);
        for e in gaps {
            assert!(got[e * w..(e + 1) * w].iter().all(|&b| b == 0xa5), "{what}: element {e} outside the view changed");
        }
    }
    common::assert_no_gpu_errors();
}
