//! The pad's gradient on the GPU (`GpuContext::pad_backward`, `PadKernel::prepare_backward`):
//! the CPU path's bits (the one order `wgpu_pad::adjoint` documents) on random plans with
//! real-valued gradients, the same bits on every run, the independent scatter's on exact
//! sums, strided views, and a wrap of many periods in one dispatch.

mod common;

use common::KernelVariant;
use common::{gpu, gpu_small_bindings, read, storage};
use wgpu_pad::gpu::{BufferRange, ExecPath, GpuContext};
use wgpu_pad::{cpu, reference, DataType, Mode, PadPlan, PadRequest, Tensor};

/// A small xorshift, for plans and gradients.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random plan: rank 1-4, crops, pads of many periods now and then, every mode.
fn random_plan(rng: &mut Rng) -> Option<PadPlan> {
    random_plan_of(DataType::Float32, rng)
}

fn random_plan_of(dtype: DataType, rng: &mut Rng) -> Option<PadPlan> {
    let rank = 1 + rng.next(4) as usize;
    let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.next(6) as usize).collect();
    let pads: Vec<i64> =
        (0..2 * rank).map(|_| rng.next(9) as i64 - 2 + if rng.next(10) == 0 { 15 } else { 0 }).collect();
    let mode = Mode::ALL[rng.next(5) as usize];
    PadPlan::new(dtype, &shape, &PadRequest::new(pads).mode(mode)).ok().filter(|p| p.out_len() > 0)
}

/// A gradient of `plan`'s output shape in its type (float32, complex64, float16 or bfloat16),
/// values of every magnitude the type holds without overflow, so that no two orders of a sum
/// round alike; a float8's, every pattern it has.
fn random_gradient(plan: &PadPlan, rng: &mut Rng) -> Tensor {
    let exponents = if plan.dtype() == DataType::Float16 { 24 } else { 40 };
    let parts = if plan.dtype() == DataType::Complex64 { 2 } else { 1 };
    let g: Vec<f32> = (0..plan.out_len() * parts)
        .map(|_| (rng.next(2001) as f32 - 1000.0) * 2f32.powi(rng.next(exponents) as i32 - 20))
        .collect();
    let shape = plan.out_shape().to_vec();
    match plan.dtype() {
        DataType::Float16 => {
            let h: Vec<half::f16> = g.iter().map(|&x| half::f16::from_f32(x)).collect();
            Tensor::from_slice(DataType::Float16, shape, &h).unwrap()
        }
        DataType::Bfloat16 => {
            let h: Vec<half::bf16> = g.iter().map(|&x| half::bf16::from_f32(x)).collect();
            Tensor::from_slice(DataType::Bfloat16, shape, &h).unwrap()
        }
        DataType::Complex64 => {
            Tensor::from_bytes(DataType::Complex64, shape, bytemuck::cast_slice(&g).to_vec()).unwrap()
        }
        DataType::Float32 => Tensor::from_slice(DataType::Float32, shape, &g).unwrap(),
        // A float8: any of its 256 patterns (infinities and NaNs too).
        float8 => {
            Tensor::from_bytes(float8, shape, (0..plan.out_len()).map(|_| rng.next(256) as u8).collect()).unwrap()
        }
    }
}

/// Every element of the GPU's gradient is the CPU's, bit for bit, on gradients of any value
/// (where the order of the sums shows in the rounding), and a second run gives the same bits.
#[test]
fn the_gpus_gradient_is_the_cpus_bit_for_bit() {
    each_types_gradient_is_the_cpus(DataType::Float32, 400);
}

/// The same for 16-bit floats, two to a word (neighbouring elements on different lanes), each
/// sum rounded to the type at every addition as the CPU path adds.
#[test]
fn half_precision_gradients_are_the_cpus_bit_for_bit() {
    each_types_gradient_is_the_cpus(DataType::Float16, 250);
    each_types_gradient_is_the_cpus(DataType::Bfloat16, 250);
}

/// The same for the float8s (but float8e8m0), four to a word, each sum taken in f32 and rounded
/// to the type at every addition (past its range to its infinity or NaN) as the CPU path adds.
#[test]
fn float8_gradients_are_the_cpus_bit_for_bit() {
    for dtype in FLOAT8S {
        each_types_gradient_is_the_cpus(dtype, 150);
    }
}

const FLOAT8S: [DataType; 4] =
    [DataType::Float8e4m3fn, DataType::Float8e4m3fnuz, DataType::Float8e5m2, DataType::Float8e5m2fnuz];

/// A float8 addition for every pair of patterns, on the GPU as on the CPU: [65536] wrapped by
/// 65536 after, so element k sums 0 + b (its pad image, 65536 + k) then + a (its kept one),
/// a = k's low byte and b its high byte: rounding, ties, subnormals, overflow to infinity or
/// NaN, NaNs, signed zeros.
#[test]
fn float8_sums_are_the_cpus_for_every_pair_of_patterns() {
    let Some(ctx) = gpu() else { return };
    let n = 1usize << 16;
    for dtype in FLOAT8S {
        let plan = PadPlan::new(dtype, &[n], &PadRequest::new(vec![0, n as i64]).mode(Mode::Wrap)).unwrap();
        let bytes: Vec<u8> = (0..n).map(|k| k as u8).chain((0..n).map(|k| (k >> 8) as u8)).collect();
        let grad = Tensor::from_bytes(dtype, vec![2 * n], bytes).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        assert_eq!(got.path, ExecPath::Gpu, "{dtype}");
        let (got, want) = (got.tensor, cpu::pad_backward(&plan, &grad).unwrap());
        let (got, want) = (got.bytes().unwrap(), want.bytes().unwrap());
        if let Some(k) = (0..n).find(|&k| got[k] != want[k]) {
            panic!(
                "{dtype}: {:#04x} + {:#04x} is {:#04x} on the GPU, {:#04x} on the CPU",
                k >> 8,
                k & 0xff,
                got[k],
                want[k]
            );
        }
    }
    common::assert_no_gpu_errors();
}

/// A plan that pads and crops nothing: its gradient is grad_out bit for bit, a NaN's payload
/// and a signalling NaN too (no sum touches an element, so nothing rounds it): every pattern
/// of the 16- and 8-bit types, float32's signalling NaNs, on the GPU as on the CPU.
#[test]
fn gradients_of_plans_that_change_nothing_keep_every_bit() {
    let Some(ctx) = gpu() else { return };
    let patterns = |dtype: DataType| -> Vec<u8> {
        match dtype.width().bytes().unwrap() {
            1 => (0..=255u8).collect(),
            2 => (0..=u16::MAX).step_by(7).chain([0x7c01, 0xfc01, 0x7f81, 0xff81]).flat_map(u16::to_le_bytes).collect(),
            _ => [0x7f80_0001u32, 0xff80_0001, 0x7fc0_0001, 1, 0x8000_0000]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        }
    };
    for dtype in [DataType::Float32, DataType::Float16, DataType::Bfloat16].into_iter().chain(FLOAT8S) {
        let bytes = patterns(dtype);
        let n = bytes.len() / dtype.width().bytes().unwrap();
        let plan = PadPlan::new(dtype, &[n], &PadRequest::new(vec![0, 0]).mode(Mode::Reflect)).unwrap();
        let grad = Tensor::from_bytes(dtype, vec![n], bytes.clone()).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        assert_eq!(got.path, ExecPath::Gpu, "{dtype}");
        assert_eq!(cpu::pad_backward(&plan, &grad).unwrap().bytes().unwrap(), &bytes[..], "{dtype}: the CPU's");
        let got = got.tensor;
        let got = got.bytes().unwrap();
        if let Some(i) = (0..bytes.len()).find(|&i| got[i] != bytes[i]) {
            panic!("{dtype}: byte {i} is {:#04x}, was {:#04x}", got[i], bytes[i]);
        }
    }
    common::assert_no_gpu_errors();
}

/// The same for complex64: its real and imaginary parts, each summed alone, on the GPU as
/// float32 values with one more axis (strides doubled).
#[test]
fn complex64_gradients_are_the_cpus_bit_for_bit() {
    each_types_gradient_is_the_cpus(DataType::Complex64, 250);
}

fn each_types_gradient_is_the_cpus(dtype: DataType, plans: usize) {
    let Some(ctx) = gpu() else { return };
    let whole = whole_gradient_context(ctx);
    let words = words_gradient_context(ctx).filter(|_| dtype.width().bytes() < Some(4));
    let apart = sides_apart_gradient_context(ctx);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ran, mut sums, mut fell_back, mut cropped, mut cornered, mut in_words) = (0, 0, 0, 0, 0, 0);
    for _ in 0..plans {
        let Some(plan) = random_plan_of(dtype, &mut rng) else { continue };
        let grad = random_gradient(&plan, &mut rng);
        let want = cpu::pad_backward(&plan, &grad).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        // Long sums on several axes at once pass a lane's bound: the CPU path, said so.
        if let ExecPath::CpuFallback { reason } = &got.path {
            assert!(reason.contains("on one lane"), "{reason}");
            fell_back += 1;
            continue;
        }
        let what = format!("{dtype} {} {:?} {:?}", plan.mode(), plan.in_shape(), [plan.begins(), plan.ends()].concat());
        assert_eq!(got.path, ExecPath::Gpu, "{what}");
        assert_eq!(got.tensor.bytes(), want.bytes(), "{what}");
        assert_eq!(ctx.pad_backward_blocking(&plan, &grad).unwrap().tensor.bytes(), want.bytes(), "{what}: run twice");
        // The default crops the bulk (the forward's kernels) and sums the borders (the edges in
        // the LEAN pipeline, the corners where two axes or more have sums in the plan's); every
        // third plan also on the gradient's own pipeline over every element: the same bits.
        let pipelines = gradient_program(&plan, KernelVariant::Default).pipeline_count();
        cropped += usize::from(pipelines >= 2);
        cornered += usize::from(pipelines == 3);
        if let Some(whole) = whole.as_ref().filter(|_| ran % 3 == 0) {
            assert_eq!(
                whole.pad_backward_blocking(&plan, &grad).unwrap().tensor.bytes(),
                want.bytes(),
                "{what}: whole"
            );
        }
        // Every third plan (another third) with its borders a box a side: the same bits.
        if let Some(apart) = apart.as_ref().filter(|_| ran % 3 == 1) {
            let got = apart.pad_backward_blocking(&plan, &grad).unwrap().tensor;
            assert_eq!(got.bytes(), want.bytes(), "{what}: sides apart");
        }
        // 8- and 16-bit types' borders a lane a word (`gradient-words`) where their rows are
        // whole words, every second plan: the same bits.
        if let Some(words) = words.as_ref().filter(|_| ran % 2 == 0) {
            let got = words.pad_backward_blocking(&plan, &grad).unwrap().tensor;
            assert_eq!(got.bytes(), want.bytes(), "{what}: words");
            in_words += usize::from(runs_in_words(&plan));
        }
        sums += usize::from(plan.out_len() > plan.in_len());
        ran += 1;
    }
    // Narrow elements crop whole words of a row: axes of 1-6 leave few of them one.
    let crops_wanted = match dtype.width().bytes() {
        Some(4 | 8) => ran / 4,
        Some(2) => ran / 10,
        _ => 0,
    };
    assert!(
        ran > plans * 3 / 4
            && sums > plans * 3 / 8
            && fell_back < ran / 10
            && cropped >= crops_wanted
            && cornered * 8 >= crops_wanted,
        "{dtype}: {ran} plans, {sums} with sums, {fell_back} on the CPU, {cropped} a crop and borders, {cornered} with corners"
    );
    assert!(words.is_none() || in_words >= crops_wanted / 4, "{dtype}: {in_words} plans' borders in words");
    common::assert_no_gpu_errors();
}

/// `gradient-words`: 8- and 16-bit borders a lane a word, on rows of whole words (where the
/// default crops the bulk), every mode, each type's values (a float8's every pattern): the
/// CPU's bits. (Random plans' axes of 1-6 seldom give a float8 such rows.)
#[test]
fn word_lanes_give_the_cpus_bits() {
    let Some(ctx) = gpu() else { return };
    let Some(words) = words_gradient_context(ctx) else { return };
    let mut rng = Rng(0x51f1_5e1d_0dd5_eed5);
    let types = [DataType::Float16, DataType::Bfloat16].into_iter().chain(FLOAT8S);
    for (dtype, mode) in types.flat_map(|t| Mode::ALL.map(|m| (t, m))) {
        // Plans whose bulk the forward's narrow kernels crop (not every strided box of rows),
        // one cropping a row away (its elements zeros, no image).
        for (shape, pads) in
            [(vec![6, 32], vec![0, 4, 0, 4]), (vec![4, 48], vec![2, 8, 1, 8]), (vec![4, 48], vec![-1, 8, 1, 8])]
        {
            let plan = PadPlan::new(dtype, &shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
            let what = format!("{dtype} {mode} {shape:?} {pads:?}");
            assert!(mode == Mode::Constant || runs_in_words(&plan), "{what}: its borders in words");
            let grad = random_gradient(&plan, &mut rng);
            let got = words.pad_backward_blocking(&plan, &grad).unwrap();
            assert_eq!(got.path, ExecPath::Gpu, "{what}");
            assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes(), "{what}");
        }
    }
    common::assert_no_gpu_errors();
}

/// The one NaN rule on the GPU as on the CPU: a sum keeps its
/// first NaN, quieted; infinities of both signs make the positive quiet NaN; a sum of one
/// term is that term (a signalling NaN and -0.0 kept). The cases worked by hand in float32 and complex64, then random plans
/// of every GPU type whose gradients are a third NaNs (random payloads, both signs, quiet and
/// signalling), infinities and signed zeros: the CPU's bits, element for element.
#[test]
fn nans_in_gradients_follow_one_rule_on_both_paths() {
    let Some(ctx) = gpu() else { return };
    let (inf, neg_inf) = (f32::INFINITY.to_bits(), f32::NEG_INFINITY.to_bits());
    // [1] edge (1, 1) sums g0 (pad before), g2 (pad after), g1 (kept); constant (1, 1) is g1.
    for (mode, g, want) in [
        (Mode::Edge, [0x7fc0_0001, 0xffc0_0002, 1f32.to_bits()], 0x7fc0_0001),
        (Mode::Edge, [1f32.to_bits(), 0xffc0_0002, 0x7f80_0003], 0x7fc0_0003),
        (Mode::Edge, [inf, 0x7fc0_0001, neg_inf], 0x7fc0_0000),
        (Mode::Constant, [0, 0x7f80_0001, 0], 0x7f80_0001),
        (Mode::Constant, [0, 0x8000_0000, 0], 0x8000_0000),
        (Mode::Edge, [0x8000_0000, 0x8000_0000, 0x8000_0000], 0),
        (Mode::Edge, [0x7f80_0001, 0, 0], 0x7fc0_0001),
    ] {
        let plan = PadPlan::new(DataType::Float32, &[1], &PadRequest::new(vec![1, 1]).mode(mode)).unwrap();
        let grad = Tensor::from_slice(DataType::Float32, vec![3], &g).unwrap();
        for (path, got) in [
            ("CPU", cpu::pad_backward(&plan, &grad).unwrap()),
            ("GPU", ctx.pad_backward_blocking(&plan, &grad).unwrap().tensor),
        ] {
            assert_eq!(got.as_slice::<u32>().unwrap(), &[want], "{path} {mode} {g:x?}");
        }
        // complex64: the same sums on both parts (the imaginary one the real one's negation).
        let plan = PadPlan::new(DataType::Complex64, &[1], &PadRequest::new(vec![1, 1]).mode(mode)).unwrap();
        let parts: Vec<u32> = g.iter().flat_map(|&r| [r, r ^ 0x8000_0000]).collect();
        let grad = Tensor::from_bytes(DataType::Complex64, vec![3], bytemuck::cast_slice(&parts).to_vec()).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap().tensor;
        assert_eq!(got, cpu::pad_backward(&plan, &grad).unwrap(), "complex64 {mode} {g:x?}");
        assert_eq!(got.bytes().unwrap()[..4], want.to_le_bytes(), "complex64's real part {mode} {g:x?}");
    }
    // (Every float8 pattern, NaNs and infinities included, is float8_gradients_are_the_cpus'.)
    let types = [DataType::Float32, DataType::Complex64, DataType::Float16, DataType::Bfloat16, DataType::Float8e5m2];
    let mut rng = Rng(0x0bad_cafe_f00d);
    let (mut ran, mut nans) = (0, 0);
    for i in 0..150 {
        let dtype = types[i % types.len()];
        let Some(plan) = random_plan_of(dtype, &mut rng) else { continue };
        let mut bytes = random_gradient(&plan, &mut rng).bytes().unwrap().to_vec();
        // A third of the values made NaN, infinite or a signed zero, in the type's own bits.
        let width = match dtype {
            DataType::Float32 | DataType::Complex64 => 4,
            DataType::Float16 | DataType::Bfloat16 => 2,
            _ => 1,
        };
        for value in bytes.chunks_exact_mut(width) {
            let r = rng.next(6);
            let sign = rng.next(2) as u32;
            let payload = rng.next(1 << 20) as u32 + 1;
            let special: u32 = match (width, r) {
                (_, 3..) => continue,
                (4, 0) => 0x7f80_0000 | payload,
                (4, 1) => 0x7f80_0000,
                (4, _) => 0,
                (2, 0) if dtype == DataType::Float16 => 0x7c00 | (payload & 0x3ff).max(1),
                (2, 0) => 0x7f80 | (payload & 0x7f).max(1),
                (2, 1) if dtype == DataType::Float16 => 0x7c00,
                (2, 1) => 0x7f80,
                (2, _) => 0,
                // The float8s' NaNs and infinities are among their random patterns already.
                _ => continue,
            };
            let special = special | sign << (8 * width as u32 - 1);
            value.copy_from_slice(&special.to_le_bytes()[..width]);
        }
        let grad = Tensor::from_bytes(dtype, plan.out_shape().to_vec(), bytes).unwrap();
        let want = cpu::pad_backward(&plan, &grad).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        if got.path != ExecPath::Gpu {
            continue;
        }
        let what = format!("{dtype} {} {:?} {:?}", plan.mode(), plan.in_shape(), [plan.begins(), plan.ends()].concat());
        assert_eq!(got.tensor.bytes(), want.bytes(), "{what}");
        nans += usize::from(want.bytes().unwrap().chunks_exact(width).any(|v| match width {
            4 => u32::from_le_bytes(v.try_into().unwrap()) & 0x7fff_ffff > 0x7f80_0000,
            _ => false,
        }));
        ran += 1;
    }
    assert!(ran > 100 && nans > 30, "{ran} plans on the GPU, {nans} float32 or complex64 ones with a NaN result");
}

/// A sum of one term is that term, bits and all, on both paths and every GPU type: each
/// element of grad_in whose every axis has one image (`adjoint::images`) is grad_out's element
/// there, byte for byte, on random bytes (NaN payloads, signalling NaNs and -0.0 among them):
/// the bulk of a constant pad (a crop of grad_out), and around the borders of reflect, edge,
/// symmetric and wrap pads, where the elements the pads fold onto sum from +0.0 between them.
#[test]
fn one_term_elements_are_grad_outs_bits_on_both_paths() {
    let Some(ctx) = gpu() else { return };
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let types = [DataType::Float32, DataType::Complex64, DataType::Float16, DataType::Bfloat16];
    let (mut kept, mut summed) = (0, 0);
    for dtype in types.into_iter().chain(FLOAT8S) {
        let width = dtype.width().bytes().unwrap();
        for mode in Mode::ALL {
            // Rows of 7: 8- and 16-bit elements straddle words; pads and crops on both axes.
            let request = PadRequest::new(vec![2, -1, 1, 3]).mode(mode);
            let plan = PadPlan::new(dtype, &[5, 7], &request).unwrap();
            let bytes: Vec<u8> = (0..plan.out_len() * width).map(|_| rng.next(256) as u8).collect();
            let grad = Tensor::from_bytes(dtype, plan.out_shape().to_vec(), bytes.clone()).unwrap();
            let cpu = cpu::pad_backward(&plan, &grad).unwrap();
            let gpu = ctx.pad_backward_blocking(&plan, &grad).unwrap();
            assert_eq!(gpu.path, ExecPath::Gpu, "{dtype} {mode}");
            let [rows, cols] = [&plan.axes()[0], &plan.axes()[1]];
            let out_cols = cols.out_len;
            for (i, (c, g)) in
                cpu.bytes().unwrap().chunks(width).zip(gpu.tensor.bytes().unwrap().chunks(width)).enumerate()
            {
                let (r, k) = (i / 7, i % 7);
                let what = format!("{dtype} {mode} element ({r}, {k})");
                assert_eq!(c, g, "{what}: the GPU's is the CPU's");
                match (&wgpu_pad::adjoint::images(rows, mode, r)[..], &wgpu_pad::adjoint::images(cols, mode, k)[..]) {
                    (&[y], &[x]) => {
                        let at = (y * out_cols + x) * width;
                        assert_eq!(c, &bytes[at..at + width], "{what}: grad_out's bits");
                        kept += 1;
                    }
                    _ => summed += 1,
                }
            }
        }
    }
    assert!(kept > 500 && summed > 300, "{kept} elements of one term, {summed} of none or several");
    common::assert_no_gpu_errors();
}

/// The GPU's gradient against the independent adjoint (each output position's gradient added
/// into the element it read), on exact sums of small integers: every mode.
#[test]
fn the_gpus_gradient_is_the_scatters_on_exact_sums() {
    let Some(ctx) = gpu() else { return };
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut modes = [0; 5];
    for _ in 0..300 {
        let Some(plan) = random_plan(&mut rng) else { continue };
        let g: Vec<f32> = (0..plan.out_len()).map(|_| rng.next(17) as f32 - 8.0).collect();
        let grad = Tensor::from_slice(DataType::Float32, plan.out_shape().to_vec(), &g).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        let what = format!("{} {:?} {:?}", plan.mode(), plan.in_shape(), [plan.begins(), plan.ends()].concat());
        assert_eq!(
            got.tensor.as_slice::<f32>(),
            reference::backward_by_scatter(&plan, &grad).as_slice::<f32>(),
            "{what}"
        );
        modes[Mode::ALL.iter().position(|&m| m == plan.mode()).unwrap()] += 1;
    }
    assert!(modes.iter().all(|&n| n > 20), "{modes:?}");
}

/// A 2-element axis wrapped by 30,000 a side: 30,001 images an element, past 64 blocks of 256
/// (the sums' blocks grow to 469 terms), one dispatch, the CPU's bits (Burn's own ops took
/// 26 s for its backward on lavapipe). Then more sums past 16,384 terms, each the CPU's bits
/// in one dispatch: a reflect and a symmetric pad of three elements (two images a period,
/// the kept one's place inside the blocks), float16 rounding at every addition, a crop.
#[test]
fn a_wrap_of_many_periods_is_one_dispatch() {
    let Some(ctx) = gpu() else { return };
    let plan = PadPlan::new(DataType::Float32, &[2], &PadRequest::new(vec![30000, 30000]).mode(Mode::Wrap)).unwrap();
    let g: Vec<f32> = (0..plan.out_len()).map(|i| ((i * 7919) % 1000) as f32 / 7.0).collect();
    let grad = Tensor::from_slice(DataType::Float32, vec![g.len()], &g).unwrap();
    let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
    assert_eq!(got.path, ExecPath::Gpu);
    let start = std::time::Instant::now();
    let again = ctx.pad_backward_blocking(&plan, &grad).unwrap();
    eprintln!("wrap [2] by 30000: {:?} on the GPU, warm, upload and readback included", start.elapsed());
    assert_eq!(again.tensor.bytes(), got.tensor.bytes());
    assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes());
    assert_eq!(one_dispatch(&plan), 1);
    let mut rng = Rng(0x5eed_1234);
    for (dtype, shape, pads, mode) in [
        (DataType::Float32, [3], [25000, 24000], Mode::Reflect),
        (DataType::Float16, [3], [25000, 26000], Mode::Symmetric),
        (DataType::Bfloat16, [4], [-1, 60000], Mode::Wrap),
    ] {
        let plan = PadPlan::new(dtype, &shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let most = (0..shape[0]).map(|k| wgpu_pad::adjoint::images(&plan.axes()[0], mode, k).len()).max().unwrap();
        assert!(most > 16384, "{mode} {pads:?}: {most} images at most");
        let grad = random_gradient(&plan, &mut rng);
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        assert_eq!(got.path, ExecPath::Gpu, "{dtype} {mode} {pads:?}");
        assert_eq!(got.tensor, cpu::pad_backward(&plan, &grad).unwrap(), "{dtype} {mode} {pads:?}");
        assert_eq!(one_dispatch(&plan), 1);
    }
}

/// Dispatches of `plan`'s gradient program under WebGPU's default limits.
fn one_dispatch(plan: &PadPlan) -> usize {
    gradient_program(plan, KernelVariant::Default).dispatches().len()
}

/// `plan`'s gradient program in kernel `variant` under WebGPU's default limits, dense views.
fn gradient_program(plan: &PadPlan, variant: KernelVariant) -> wgpu_pad::gpu::Program {
    let (i, o) = plan.byte_sizes().unwrap();
    common::backward_program_in(
        plan,
        &wgpu_pad::gpu::BufferView::dense(0, o.next_multiple_of(4)),
        &wgpu_pad::gpu::BufferView::dense(0, i.next_multiple_of(4)),
        &wgpu_pad::gpu::DeviceLimits::WEBGPU_DEFAULT,
        variant,
    )
    .unwrap()
}

/// A context on `ctx`'s device whose gradients run the gradient's own pipeline on every element
/// (`KernelVariant::GradientWhole`: no crop of the bulk); none without the `variants` feature.
fn whole_gradient_context(ctx: &GpuContext) -> Option<GpuContext> {
    #[cfg(feature = "variants")]
    return Some(variant_context(ctx, KernelVariant::GradientWhole));
    #[cfg(not(feature = "variants"))]
    {
        let _ = ctx;
        None
    }
}

/// A context on `ctx`'s device whose gradients' 8- and 16-bit borders run a lane a word where
/// their rows are whole words (`KernelVariant::GradientWords`); none without the `variants`
/// feature.
fn words_gradient_context(ctx: &GpuContext) -> Option<GpuContext> {
    #[cfg(feature = "variants")]
    return Some(variant_context(ctx, KernelVariant::GradientWords));
    #[cfg(not(feature = "variants"))]
    {
        let _ = ctx;
        None
    }
}

/// A context on `ctx`'s device whose gradients' borders are a box a side
/// (`KernelVariant::GradientSidesApart`); none without the `variants` feature.
fn sides_apart_gradient_context(ctx: &GpuContext) -> Option<GpuContext> {
    #[cfg(feature = "variants")]
    return Some(variant_context(ctx, KernelVariant::GradientSidesApart));
    #[cfg(not(feature = "variants"))]
    {
        let _ = ctx;
        None
    }
}

/// Whether `plan`'s gradient program under `gradient-words` is not the default's (its
/// borders a lane a word); false without the `variants` feature.
fn runs_in_words(plan: &PadPlan) -> bool {
    #[cfg(feature = "variants")]
    {
        let keys = |v| {
            let p = gradient_program(plan, v);
            (0..p.pipeline_count()).map(|i| p.pipeline_key(i)).collect::<Vec<_>>()
        };
        keys(KernelVariant::GradientWords) != keys(KernelVariant::Default)
    }
    #[cfg(not(feature = "variants"))]
    {
        let _ = plan;
        false
    }
}

/// A context on `ctx`'s device whose kernels run `variant`.
#[cfg(feature = "variants")]
fn variant_context(ctx: &GpuContext, variant: KernelVariant) -> GpuContext {
    let other = GpuContext::from_device(ctx.device(), ctx.queue(), ctx.adapter_info().clone()).unwrap();
    wgpu_pad::gpu::measurement::select(other.kernel(), variant);
    other
}

/// The engine's way: the gradient recorded into its encoder from strided views of its own
/// buffers (a transposed grad_out at an offset, grad_in into every other element of a larger
/// buffer), the bytes outside the views untouched; on 1 KiB bindings a wrap of both axes too,
/// in parts (its first and last rows read both ends of axis 0), grad_out's rows 3 elements
/// apart.
#[test]
fn strided_views_of_the_engines_buffers() {
    let Some(ctx) = gpu() else { return };
    let reflect =
        PadPlan::new(DataType::Float32, &[3, 4], &PadRequest::new(vec![2, 1, 1, 3]).mode(Mode::Reflect)).unwrap();
    strided_gradient(ctx, &reflect, true, 1);
    let Some(small) = gpu_small_bindings() else { return };
    let wrap = PadPlan::new(DataType::Float32, &[20, 20], &PadRequest::new(vec![1, 1, 1, 1]).mode(Mode::Wrap)).unwrap();
    strided_gradient(small, &wrap, false, 3);
    common::assert_no_gpu_errors();
}

/// `plan`'s gradient from grad_out 64 bytes into its buffer (`transposed`, or its rows 3
/// elements apart) into every other element of grad_in's, in at least `dispatches`
/// dispatches; the CPU's bits, the gaps kept.
fn strided_gradient(ctx: &wgpu_pad::gpu::GpuContext, plan: &PadPlan, transposed: bool, dispatches: usize) {
    let ([r, c], [rows, cols]) = ([plan.out_shape()[0], plan.out_shape()[1]], [plan.in_shape()[0], plan.in_shape()[1]]);
    let g: Vec<f32> = (0..r * c).map(|i| i as f32 * 0.37 - 3.0).collect();
    let t_strides = if transposed { [1u64, r as u64] } else { [c as u64 + 3, 1] };
    let mut stored = vec![0f32; 16 + (r - 1) * t_strides[0] as usize + (c - 1) * t_strides[1] as usize + 1];
    for y in 0..r {
        for x in 0..c {
            stored[16 + y * t_strides[0] as usize + x * t_strides[1] as usize] = g[y * c + x];
        }
    }
    let in_bytes = rows * cols * 2 * 4;
    let grad_out = storage(ctx, bytemuck::cast_slice(&stored));
    let grad_in = storage(ctx, &vec![0xffu8; in_bytes]);
    let kernel = ctx.kernel();
    let in_strides = [2 * cols as u64, 2];
    let pad = kernel
        .prepare_backward(
            plan,
            BufferRange::new(&grad_out, 64, (stored.len() as u64 - 16) * 4).with_strides(&t_strides),
            BufferRange::whole(&grad_in).with_strides(&in_strides),
        )
        .unwrap();
    assert!(pad.dispatch_count() >= dispatches, "{} dispatches", pad.dispatch_count());
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pad.record(&mut pass);
    }
    ctx.queue().submit([encoder.finish()]);
    let got: Vec<f32> = bytemuck::pod_collect_to_vec(&read(ctx, &grad_in, 0, in_bytes as u64));
    let want = cpu::pad_backward(plan, &Tensor::from_slice(DataType::Float32, vec![r, c], &g).unwrap()).unwrap();
    let want = want.as_slice::<f32>().unwrap();
    for (i, pair) in got.chunks(2).enumerate() {
        assert_eq!(pair[0].to_bits(), want[i].to_bits(), "{:?} element {i}", plan.mode());
        assert_eq!(pair[1].to_bits(), f32::from_bits(0xffff_ffff).to_bits(), "the gap after element {i} was written");
    }
}

/// What has no gradient is refused by name; float64 and complex128 run on the CPU path and say
/// so; the float8s on the GPU.
#[test]
fn other_types_fall_back_or_are_refused() {
    let Some(ctx) = gpu() else { return };
    let ints = PadPlan::new(DataType::Int32, &[3], &PadRequest::new(vec![1, 1])).unwrap();
    let e = ctx.pad_backward_blocking(&ints, &Tensor::zeros(DataType::Int32, vec![5]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("no gradient"), "{e}");
    let doubles = PadPlan::new(DataType::Float64, &[3], &PadRequest::new(vec![1, 1]).mode(Mode::Edge)).unwrap();
    let got = ctx.pad_backward_blocking(&doubles, &Tensor::zeros(DataType::Float64, vec![5]).unwrap()).unwrap();
    assert!(matches!(got.path, ExecPath::CpuFallback { .. }), "{:?}", got.path);
    let pairs = PadPlan::new(DataType::Complex128, &[3], &PadRequest::new(vec![1, 1]).mode(Mode::Edge)).unwrap();
    let got = ctx.pad_backward_blocking(&pairs, &Tensor::zeros(DataType::Complex128, vec![5]).unwrap()).unwrap();
    assert!(matches!(got.path, ExecPath::CpuFallback { .. }), "{:?}", got.path);
    // The float8s on the GPU (1, 2, 3 by edge: 1 + 1 + 1, 2, 3 + 3 in float8e5m2).
    let f8 = PadPlan::new(DataType::Float8e5m2, &[3], &PadRequest::new(vec![2, 1]).mode(Mode::Edge)).unwrap();
    let grad = Tensor::from_bytes(DataType::Float8e5m2, vec![6], vec![0x3c, 0x3c, 0x3c, 0x40, 0x42, 0x42]).unwrap();
    let got = ctx.pad_backward_blocking(&f8, &grad).unwrap();
    assert_eq!(got.path, ExecPath::Gpu);
    assert_eq!(got.tensor.bytes().unwrap(), &[0x42, 0x40, 0x46], "3, 2, 6");
    let scales = PadPlan::new(DataType::Float8e8m0, &[3], &PadRequest::new(vec![1, 1]).mode(Mode::Edge)).unwrap();
    let e = ctx.pad_backward_blocking(&scales, &Tensor::zeros(DataType::Float8e8m0, vec![5]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("float8e8m0"), "{e}");
}

/// 16- and 8-bit gradients in an engine's buffers: grad_out at an unaligned offset, grad_in
/// into every other element from an odd one, so each word written holds elements of the view
/// and bytes of the engine's, which stay as they were (the stores touch their own bytes).
#[test]
fn narrow_views_keep_their_neighbours_bits() {
    let Some(ctx) = gpu() else { return };
    for dtype in [DataType::Float16, DataType::Bfloat16].into_iter().chain(FLOAT8S) {
        let w = dtype.width().bytes().unwrap();
        let plan = PadPlan::new(dtype, &[3, 5], &PadRequest::new(vec![1, 2, 2, 1]).mode(Mode::Symmetric)).unwrap();
        let grad = random_gradient(&plan, &mut Rng(0x1234_5678_9abc_def1));
        let out_bytes = grad.bytes().unwrap();
        let mut stored = vec![0x5au8; 6];
        stored.extend_from_slice(out_bytes);
        stored.resize(stored.len().next_multiple_of(4), 0x5a);
        let grad_out = storage(ctx, &stored);
        // 15 elements at elements 1, 3, 5, ... of a buffer of 32.
        let grad_in = storage(ctx, &vec![0xa5u8; 32 * w]);
        let pad = ctx
            .kernel()
            .prepare_backward(
                &plan,
                BufferRange::new(&grad_out, 6, out_bytes.len() as u64),
                BufferRange::new(&grad_in, w as u64, 30 * w as u64).with_strides(&[10, 2]),
            )
            .unwrap();
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        pad.record(&mut encoder.begin_compute_pass(&Default::default()));
        ctx.queue().submit([encoder.finish()]);
        let got = read(ctx, &grad_in, 0, 32 * w as u64);
        let want = cpu::pad_backward(&plan, &grad).unwrap();
        let want = want.bytes().unwrap();
        for (i, pair) in got.chunks(2 * w).enumerate() {
            assert!(
                pair[..w].iter().all(|&b| b == 0xa5),
                "{dtype}: the engine's element before element {i} was written"
            );
            if i < 15 {
                assert_eq!(pair[w..], want[w * i..w * i + w], "{dtype}: element {i}");
            } else {
                assert!(pair[w..].iter().all(|&b| b == 0xa5), "{dtype}: pair {i} is past the view");
            }
        }
    }
    common::assert_no_gpu_errors();
}

/// Edge pads of 100 on two axes: a corner element sums 101 x 101 terms, past a lane's bound
/// with no axis past a block; the outer axis's terms go to a workgroup's lanes, the sums still
/// in the one order: the CPU's bits in float32 and float16 (ran on the CPU path before). An
/// edge of 299 on the inner axis: its first index's 300 images (two blocks) summed on a lane
/// inside the outer axis's split terms, and alone where the outer index has one image.
#[test]
fn long_sums_on_two_axes_are_split_over_lanes() {
    let Some(ctx) = gpu() else { return };
    for dtype in [DataType::Float32, DataType::Float16] {
        for (shape, pads) in [
            (&[2usize, 3][..], &[100i64, 100, 100, 100][..]),
            (&[2, 3, 4], &[0, 90, 95, 1, 100, 99]),
            (&[3, 4], &[1, 299, 1, 0]),
        ] {
            let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(Mode::Edge)).unwrap();
            let grad = random_gradient(&plan, &mut Rng(0x5eed_1234_abcd_0001));
            let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
            assert_eq!(got.path, ExecPath::Gpu, "{dtype} {shape:?}");
            assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes(), "{dtype} {shape:?}");
        }
    }
    common::assert_no_gpu_errors();
}

/// Gradients past one storage binding (a device of 1 KiB bindings): windows along an axis,
/// padded or not, each a dispatch binding the output gradient its elements read; the CPU's
/// bits, crops, 16- and 8-bit types too. Where no window's reads fit (a wrap's images span
/// the axis), the CPU path.
#[test]
fn gradients_past_one_binding_run_in_windows() {
    let Some(ctx) = gpu_small_bindings() else { return };
    let whole = whole_gradient_context(ctx);
    let mut cropped = Vec::new();
    let mut rng = Rng(0x0bad_cafe_f00d_0001);
    for (dtype, shape, pads, mode) in [
        // Outer axes the pad leaves alone.
        (DataType::Float32, &[3usize, 4, 5, 6][..], &[0i64, 0, 1, 2, 0, 0, 2, 1][..], Mode::Reflect),
        (DataType::Float16, &[3, 4, 5, 6], &[0, 0, 1, 2, 0, 0, 2, 1], Mode::Symmetric),
        (DataType::Float32, &[6, 2], &[0, 60, 0, 60], Mode::Wrap),
        (DataType::Float32, &[2, 3, 40], &[0, 0, -3, 0, 0, 9], Mode::Edge),
        // Every axis padded or cropped: windows along a padded one.
        (DataType::Float32, &[20, 20], &[1, 1, 1, 1], Mode::Constant),
        (DataType::Float32, &[24, 9], &[3, 2, -2, 4], Mode::Edge),
        (DataType::Float16, &[30, 11], &[4, 3, 2, 5], Mode::Reflect),
        (DataType::Float32, &[30, 12], &[5, -1, 5, 3], Mode::Symmetric),
        (DataType::Float8e4m3fn, &[40, 30], &[2, 1, -3, 6], Mode::Edge),
        (DataType::Bfloat16, &[40, 13], &[2, 1, 3, 2], Mode::Reflect),
        // A row past a binding: windows along the inner axis, an outer index each.
        (DataType::Float32, &[4, 300], &[1, 1, 0, 0], Mode::Constant),
        // Narrow elements whose bulk rows move in whole words (the forward crops them so).
        (DataType::Float16, &[40, 16], &[2, 2, 2, 2], Mode::Reflect),
        (DataType::Bfloat16, &[40, 16], &[2, 4, 2, 4], Mode::Edge),
        (DataType::Float8e4m3fn, &[40, 32], &[4, 4, 4, 4], Mode::Edge),
    ] {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let (_, out_bytes) = plan.byte_sizes().unwrap();
        assert!(out_bytes > 1024, "{shape:?}: past one binding");
        let grad = random_gradient(&plan, &mut rng);
        let what = format!("{dtype} {mode} {shape:?}");
        // The default (the bulk's crop in the forward's windows, the borders' windows) and the
        // gradient's own pipeline on every element, in windows.
        let limits = wgpu_pad::gpu::DeviceLimits::from(&ctx.device().limits());
        let (i, o) = plan.byte_sizes().unwrap();
        let dense = |n: u64| wgpu_pad::gpu::BufferView::dense(0, n.next_multiple_of(4));
        let program = |v| common::backward_program_in(&plan, &dense(o), &dense(i), &limits, v);
        if program(KernelVariant::Default).unwrap().pipeline_count() >= 2 {
            cropped.push(dtype);
        }
        #[cfg(feature = "variants")]
        assert_eq!(program(KernelVariant::GradientWhole).unwrap().pipeline_count(), 1, "{what}");
        for ctx in std::iter::once(ctx).chain(whole.as_ref()) {
            let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
            assert_eq!(got.path, ExecPath::Gpu, "{what}");
            assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes(), "{what}");
        }
    }
    // Each type's bulk a crop somewhere (8- and 16-bit ones where their rows are whole words:
    // else the forward's kernels, which write such outputs only dense, leave it to the
    // gradient's pipeline).
    for dtype in [DataType::Float32, DataType::Float16, DataType::Bfloat16, DataType::Float8e4m3fn] {
        assert!(cropped.contains(&dtype), "{dtype}: no crop of its bulk in {cropped:?}");
    }
    common::assert_no_gpu_errors();
}

/// Where a window's reads span the axis (a wrap's first and last indices read both ends of it,
/// a wide pad's images lie all along it), the sums run in parts along the first axis the pad
/// touches, each part continuing the sums the parts before it stored: on the GPU, the CPU's
/// bits, every element type's loads and stores (f32, two and four to a word; complex64 as its
/// parts).
#[test]
fn gradients_whose_windows_read_the_whole_axis_run_in_parts() {
    let Some(ctx) = gpu_small_bindings() else { return };
    let whole_pipeline = whole_gradient_context(ctx);
    let mut rng = Rng(0x0bad_cafe_f00d_0002);
    for (dtype, shape, pads, mode) in [
        (DataType::Float32, &[20usize, 20][..], &[1i64, 1, 1, 1][..], Mode::Wrap),
        (DataType::Float32, &[600], &[3, 7], Mode::Wrap),
        (DataType::Float16, &[30, 11], &[4, 3, 2, 5], Mode::Wrap),
        (DataType::Float8e5m2, &[40, 30], &[2, 3, -3, 6], Mode::Wrap),
        // The first axis left alone, its rows past a binding: parts along the second.
        (DataType::Float32, &[3, 400], &[0, 5, 0, 5], Mode::Wrap),
        // Pads wider than the axis: an index's images all along it.
        (DataType::Bfloat16, &[12, 30], &[20, 1, 25, 2], Mode::Reflect),
        (DataType::Float32, &[10, 24], &[-2, 17, 14, -3], Mode::Symmetric),
        (DataType::Float32, &[9, 25], &[12, 10, 0, 0], Mode::Wrap),
        // Its parts as float32 with one more axis.
        (DataType::Complex64, &[20, 9], &[1, 1, 1, 1], Mode::Wrap),
        // Sums split over a workgroup's lanes (corners of 101 x 101 terms; 40 x 250), a part
        // a row (the wgpu 29 host's test takes parts of several rows).
        (DataType::Float32, &[2, 3], &[100, 100, 100, 100], Mode::Edge),
        (DataType::Float16, &[1, 1], &[20, 125, 19, 124], Mode::Wrap),
    ] {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let grad = random_gradient(&plan, &mut rng);
        let what = format!("{dtype} {mode} {shape:?} {pads:?}");
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        assert_eq!(got.path, ExecPath::Gpu, "{what}");
        assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes(), "{what}");
        // Run to run, and against one binding (one dispatch): the same bits.
        assert_eq!(ctx.pad_backward_blocking(&plan, &grad).unwrap().tensor.bytes(), got.tensor.bytes(), "{what}");
        let whole = gpu().unwrap().pad_backward_blocking(&plan, &grad).unwrap();
        assert_eq!((whole.path, whole.tensor.bytes()), (ExecPath::Gpu, got.tensor.bytes()), "{what}");
        // The gradient's own pipeline on every element (no crop of the bulk), in parts.
        if let Some(whole_pipeline) = &whole_pipeline {
            let parts = whole_pipeline.pad_backward_blocking(&plan, &grad).unwrap();
            assert_eq!((parts.path, parts.tensor.bytes()), (ExecPath::Gpu, got.tensor.bytes()), "{what}");
        }
    }
    // Random plans past a binding (rank 1-3, axes of up to 40, crops and pads wider than the
    // axis, every mode): windows or parts on the GPU (34 of 40 when written), else the CPU
    // path saying why parts could not; every one the CPU's bits.
    let (mut rng, mut on_gpu, mut tried) = (Rng(0x0bad_cafe_f00d_0003), 0, 0);
    while tried < 40 {
        let rank = 1 + rng.next(3) as usize;
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.next(40) as usize).collect();
        let pads: Vec<i64> =
            (0..2 * rank).map(|_| rng.next(12) as i64 - 3 + if rng.next(6) == 0 { 40 } else { 0 }).collect();
        let mode = Mode::ALL[rng.next(5) as usize];
        let Ok(plan) = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads.clone()).mode(mode)) else {
            continue;
        };
        if plan.byte_sizes().unwrap().1 <= 1024 {
            continue;
        }
        tried += 1;
        let grad = random_gradient(&plan, &mut rng);
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        let what = format!("{mode} {shape:?} {pads:?} {:?}", got.path);
        assert_eq!(got.tensor.bytes(), cpu::pad_backward(&plan, &grad).unwrap().bytes(), "{what}");
        match &got.path {
            ExecPath::Gpu => on_gpu += 1,
            // Parts cut one axis's sums: where an axis inside it has images spanning more
            // than a binding (1 KiB here: a wrap, a reflection of 8), no window fits them.
            ExecPath::CpuFallback { reason } => assert!(reason.contains("nor in parts"), "{what}"),
        }
    }
    assert!(on_gpu >= 30, "{on_gpu} of 40 on the GPU");
    // More than a block's images an index (a 4-element axis wrapped by 600 a side: 301): the
    // parts would cut its blocks' sums, so the CPU path runs it and says why.
    let plan = PadPlan::new(DataType::Float32, &[4], &PadRequest::new(vec![600, 600]).mode(Mode::Wrap)).unwrap();
    let got = ctx.pad_backward_blocking(&plan, &random_gradient(&plan, &mut rng)).unwrap();
    assert!(matches!(&got.path, ExecPath::CpuFallback { reason } if reason.contains("binding")), "{:?}", got.path);
    common::assert_no_gpu_errors();
}
