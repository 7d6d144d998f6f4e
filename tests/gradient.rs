//! The pad's gradient on the GPU (`GpuContext::pad_backward`, `PadKernel::prepare_backward`):
//! the CPU path's bits (the one order `wgpu_pad::adjoint` documents) on random plans with
//! real-valued gradients, the same bits on every run, the independent scatter's on exact
//! sums, strided views, and a wrap of many periods in one dispatch.

mod common;

use common::{gpu, read, storage};
use wgpu_pad::gpu::{BufferRange, ExecPath};
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
    let rank = 1 + rng.next(4) as usize;
    let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.next(6) as usize).collect();
    let pads: Vec<i64> =
        (0..2 * rank).map(|_| rng.next(9) as i64 - 2 + if rng.next(10) == 0 { 15 } else { 0 }).collect();
    let mode = Mode::ALL[rng.next(5) as usize];
    PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads).mode(mode)).ok().filter(|p| p.out_len() > 0)
}

/// Every element of the GPU's gradient is the CPU's, bit for bit, on gradients of any value
/// (where the order of the sums shows in the rounding), and a second run gives the same bits.
#[test]
fn the_gpus_gradient_is_the_cpus_bit_for_bit() {
    let Some(ctx) = gpu() else { return };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ran, mut sums, mut fell_back) = (0, 0, 0);
    for _ in 0..400 {
        let Some(plan) = random_plan(&mut rng) else { continue };
        // Values of every magnitude, so that no two orders of a sum round alike.
        let g: Vec<f32> = (0..plan.out_len())
            .map(|_| (rng.next(2001) as f32 - 1000.0) * 2f32.powi(rng.next(40) as i32 - 20))
            .collect();
        let grad = Tensor::from_slice(DataType::Float32, plan.out_shape().to_vec(), &g).unwrap();
        let want = cpu::pad_backward(&plan, &grad).unwrap();
        let got = ctx.pad_backward_blocking(&plan, &grad).unwrap();
        // Long sums on several axes at once pass a lane's bound: the CPU path, said so.
        if let ExecPath::CpuFallback { reason } = &got.path {
            assert!(reason.contains("on one lane"), "{reason}");
            fell_back += 1;
            continue;
        }
        let what = format!("{} {:?} {:?}", plan.mode(), plan.in_shape(), [plan.begins(), plan.ends()].concat());
        assert_eq!(got.tensor.bytes(), want.bytes(), "{what}");
        assert_eq!(ctx.pad_backward_blocking(&plan, &grad).unwrap().tensor.bytes(), want.bytes(), "{what}: run twice");
        sums += usize::from(plan.out_len() > plan.in_len());
        ran += 1;
    }
    assert!(ran > 300 && sums > 150 && fell_back < ran / 10, "{ran} plans, {sums} with sums, {fell_back} on the CPU");
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

/// A 2-element axis wrapped by 30,000 a side: 15,001 images an element, one dispatch, the
/// CPU's bits (Burn's own ops took 26 s for its backward on lavapipe).
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
    let (i, o) = plan.byte_sizes().unwrap();
    let program = wgpu_pad::gpu::Program::backward(
        &plan,
        &wgpu_pad::gpu::BufferView::dense(0, o),
        &wgpu_pad::gpu::BufferView::dense(0, i),
        &wgpu_pad::gpu::DeviceLimits::WEBGPU_DEFAULT,
    )
    .unwrap();
    assert_eq!(program.dispatches().len(), 1);
}

/// The engine's way: the gradient recorded into its encoder from strided views of its own
/// buffers (a transposed grad_out at an offset, grad_in into every other element of a larger
/// buffer), the bytes outside the views untouched.
#[test]
fn strided_views_of_the_engines_buffers() {
    let Some(ctx) = gpu() else { return };
    let plan =
        PadPlan::new(DataType::Float32, &[3, 4], &PadRequest::new(vec![2, 1, 1, 3]).mode(Mode::Reflect)).unwrap();
    let [r, c] = [plan.out_shape()[0], plan.out_shape()[1]];
    let g: Vec<f32> = (0..r * c).map(|i| i as f32 * 0.37 - 3.0).collect();
    // grad_out stored transposed (column-major), 64 bytes in.
    let mut stored = vec![0f32; 16 + r * c];
    for y in 0..r {
        for x in 0..c {
            stored[16 + x * r + y] = g[y * c + x];
        }
    }
    let grad_out = storage(ctx, bytemuck::cast_slice(&stored));
    let grad_in = storage(ctx, &[0xffu8; 3 * 4 * 2 * 4]);
    let kernel = ctx.kernel();
    let (t_strides, in_strides) = ([1u64, r as u64], [8u64, 2]);
    let pad = kernel
        .prepare_backward(
            &plan,
            BufferRange::new(&grad_out, 64, (r * c * 4) as u64).with_strides(&t_strides),
            BufferRange::whole(&grad_in).with_strides(&in_strides),
        )
        .unwrap();
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pad.record(&mut pass);
    }
    ctx.queue().submit([encoder.finish()]);
    let got: Vec<f32> = bytemuck::pod_collect_to_vec(&read(ctx, &grad_in, 0, 3 * 4 * 2 * 4));
    let want = cpu::pad_backward(&plan, &Tensor::from_slice(DataType::Float32, vec![r, c], &g).unwrap()).unwrap();
    let want = want.as_slice::<f32>().unwrap();
    for (i, pair) in got.chunks(2).enumerate() {
        assert_eq!(pair[0].to_bits(), want[i].to_bits(), "element {i}");
        assert_eq!(pair[1].to_bits(), f32::from_bits(0xffff_ffff).to_bits(), "the gap after element {i} was written");
    }
    common::assert_no_gpu_errors();
}

/// What has no gradient is refused by name; other float types run on the CPU path and say so.
#[test]
fn other_types_fall_back_or_are_refused() {
    let Some(ctx) = gpu() else { return };
    let ints = PadPlan::new(DataType::Int32, &[3], &PadRequest::new(vec![1, 1])).unwrap();
    let e = ctx.pad_backward_blocking(&ints, &Tensor::zeros(DataType::Int32, vec![5]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("no gradient"), "{e}");
    let halves = PadPlan::new(DataType::Float16, &[3], &PadRequest::new(vec![1, 1]).mode(Mode::Edge)).unwrap();
    let got = ctx.pad_backward_blocking(&halves, &Tensor::zeros(DataType::Float16, vec![5]).unwrap()).unwrap();
    assert!(matches!(got.path, ExecPath::CpuFallback { .. }), "{:?}", got.path);
}
