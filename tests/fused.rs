//! The fused pad (`wgpu_pad::fused`): a convolution reading its unpadded input through the
//! generated WGSL functions (their parameters bound as a uniform, and baked as constants)
//! equals our pad followed by the same convolution, bit for bit, in
//! every mode: images padded by 1, crops, pads wider than the axis (the periodic modes
//! repeat their period), a constant other than zero, and audio framing (f32 [1,1,16000]
//! padded by 512, a 1-D filter). The padded path is also checked against the convolution on
//! the host, so that two equal wrong answers cannot pass.

mod common;

#[path = "../examples/fused_conv/conv.rs"]
mod conv;

use conv::{Conv, Load, Prepared};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

fn check(shape: &[usize], pads: &[i64], constant: Option<f32>, out_channels: usize, (kh, kw): (usize, usize)) {
    let Some(ctx) = common::gpu() else { return };
    let (input, weights) = conv::case_data(shape, pads, out_channels, kh, kw);
    let x = Tensor::from_slice(DataType::Float32, shape.to_vec(), &input).unwrap();
    for mode in Mode::ALL {
        let mut request = PadRequest::new(pads.to_vec()).mode(mode);
        if let Some(c) = constant {
            request = request.constant(Tensor::from_slice(DataType::Float32, vec![], &[c]).unwrap());
        }
        let plan = PadPlan::new(DataType::Float32, shape, &request).unwrap();
        let conv = Conv { plan: &plan, out_channels, kh, kw };
        let prepared = Prepared::new(ctx.device(), ctx.kernel(), &conv, &input, &weights);
        let outputs = pollster::block_on(conv::run_all(ctx.device(), ctx.queue(), &prepared));
        let padded = &outputs[2];
        for (load, out) in Load::ALL.iter().zip(&outputs) {
            let differ = out.iter().zip(padded).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
            assert_eq!(differ, 0, "{mode} {shape:?} {pads:?} {load:?}: {differ} of {} outputs differ", out.len());
        }
        let on_cpu = cpu::pad(&plan, &x).unwrap();
        let want = conv::on_host(&conv, on_cpu.as_slice::<f32>().unwrap(), &weights);
        for (i, (g, w)) in padded.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{mode} {shape:?}: output {i} is {g}, the host's {w}");
        }
    }
    common::assert_no_gpu_errors();
}

#[test]
fn an_image_padded_by_one() {
    check(&[2, 3, 9, 7], &[0, 0, 1, 1, 0, 0, 1, 1], None, 4, (3, 3));
}

#[test]
fn crops_and_pads_wider_than_the_axis() {
    // Height: a crop of 1 before, 6 after (wider than the 4 kept); width: 9 before (past
    // two periods of 3 kept), a crop of 2 after.
    check(&[1, 2, 5, 5], &[0, 0, -1, 9, 0, 0, 6, -2], None, 3, (3, 3));
    // Pads on the batch and channel axes too.
    check(&[2, 2, 4, 4], &[1, 0, 2, 2, 0, 1, 3, 1], None, 2, (3, 3));
}

#[test]
fn a_constant_other_than_zero() {
    check(&[1, 2, 6, 6], &[0, 0, 2, 1, 0, 0, 1, 2], Some(2.5), 2, (3, 3));
}

#[test]
fn audio_framing_padded_by_512() {
    check(&[1, 1, 16000], &[0, 0, 512, 0, 0, 512], None, 4, (1, 9));
}

/// Round six: `{p}source_flat` on a device, the crate's own rustdoc example as a kernel (each
/// output element from its flat index), in both forms, equals cpu::pad bit for bit, at ranks
/// 1 to 4 and in every mode: its axis decoding (innermost first) is what the tests above,
/// which call `{p}source` with coordinates, never ran.
#[test]
fn source_flat_pads_like_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let cases: [(&[usize], &[i64]); 4] = [
        (&[7], &[3, 5]),
        (&[3, 4], &[1, 2, 0, 3]),
        (&[2, 3, 4], &[0, 1, 2, 1, 0, 3]),
        (&[2, 3, 4, 5], &[1, 0, 2, -1, 0, 2, 1, 3]),
    ];
    for (shape, pads) in cases {
        for mode in Mode::ALL {
            let request = PadRequest::new(pads.to_vec()).mode(mode).constant(1.5);
            let Ok(plan) = PadPlan::new(DataType::Float32, shape, &request) else { continue };
            let x = common::pattern(DataType::Float32, shape, 7);
            let want = cpu::pad(&plan, &x).unwrap();
            for baked in [false, true] {
                let got = run_source_flat(ctx, &plan, &x, baked);
                assert!(got == want.bytes().unwrap(), "{mode} {shape:?} {pads:?} (baked {baked})");
            }
        }
    }
    common::assert_no_gpu_errors();
}

/// y[i] = x[source_flat(i)], or the constant: the module docs' kernel.
fn run_source_flat(ctx: &wgpu_pad::gpu::GpuContext, plan: &PadPlan, x: &Tensor, baked: bool) -> Vec<u8> {
    use wgpu_pad::fused;
    let rank = plan.out_shape().len();
    let functions = match baked {
        false => fused::wgsl(plan.mode(), rank, "pad_").unwrap(),
        true => fused::wgsl_baked(plan, "pad_").unwrap(),
    };
    let params = match baked {
        false => "@group(0) @binding(0) var<uniform> pad: pad_Params;",
        true => "",
    };
    let pad = if baked { "pad_params()" } else { "pad" };
    let n: usize = plan.out_shape().iter().product();
    let src = format!(
        "{functions}
{params}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
    if (id.x >= {n}u) {{ return; }}
    let p = {pad};
    let s = pad_source_flat(p, id.x);
    var v = bitcast<f32>(p.constant.x);
    if (s != pad_NONE) {{ v = x[s]; }}
    y[id.x] = v;
}}"
    );
    let device = ctx.device();
    let pipeline = common::compute_pipeline(device, &src);
    let input = common::storage(ctx, x.bytes().unwrap());
    let output = common::storage(ctx, &vec![0u8; n * 4]);
    let params = {
        use wgpu::util::DeviceExt;
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &fused::uniform_bytes(plan).unwrap(),
            usage: wgpu::BufferUsages::UNIFORM,
        })
    };
    let mut entries = vec![
        wgpu::BindGroupEntry { binding: 1, resource: input.as_entire_binding() },
        wgpu::BindGroupEntry { binding: 2, resource: output.as_entire_binding() },
    ];
    if !baked {
        entries.push(wgpu::BindGroupEntry { binding: 0, resource: params.as_entire_binding() });
    }
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64) as u32, 1, 1);
    }
    ctx.queue().submit([enc.finish()]);
    common::read(ctx, &output, 0, (n * 4) as u64)
}

#[path = "../examples/gpu_vs_cpu/timer.rs"]
mod timer;

/// The one GPU timer (the harness's, which the fused convolution's example includes): each
/// batch records each of its runs, the warm-up ends even where the timer sees nothing, and
/// timestamps where the device writes them in encoders (the harness's own unit tests hold its
/// batch sizes and warm-up).
#[test]
fn the_timer_records_its_batches() {
    use timer::{steady_batch, GpuTimer, Steady, BATCH_MAX};
    let Some(ctx) = common::gpu() else { return };
    let timer = GpuTimer::new(ctx.device(), ctx.queue());
    let features = ctx.device().features();
    let want = if features.contains(wgpu::Features::TIMESTAMP_QUERY) { "timestamp" } else { "wall" };
    assert_eq!(timer.label(), want);
    let inside = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    assert_eq!(timer.encoded_label(), if features.contains(inside) { "timestamp" } else { "wall" });
    let runs = std::cell::Cell::new(0);
    let t = timer.encoded(7, |_| runs.set(runs.get() + 1)).unwrap();
    assert_eq!(runs.get(), 7, "a batch records each of its runs");
    assert!(t.is_finite() && t >= 0.0, "{t}");
    let n = steady_batch(&Steady { warmup_ms: 5.0, batch_ms: 1.0 }, |n| timer.encoded(n, |_| {})).unwrap();
    assert!((1..=BATCH_MAX).contains(&n), "{n}");
    common::assert_no_gpu_errors();
}

/// A stride-2 transposed 3x3 convolution: a convolution reading its input through the fused
/// interior pad (bound and baked) equals the same convolution over the dilated tensor our pad
/// wrote, and a direct transposed convolution on the host, bit for bit (data whose sums are
/// exact in any order).
#[test]
fn a_transposed_convolution_reads_through_the_interior_pad() {
    let Some(ctx) = common::gpu() else { return };
    let (shape, out_channels) = ([2, 3, 5, 4], 2);
    let (input, transposed) = conv::exact_data(&shape, out_channels, 3, 3);
    let weights = conv::flipped(&transposed, shape[1], out_channels, 3, 3);
    let plan =
        PadPlan::new(DataType::Float32, &shape, &PadRequest::from_padding_config(&conv::TRANSPOSED_PADDING)).unwrap();
    assert_eq!(plan.out_shape(), &[2, 3, 12, 10]);
    let conv = Conv { plan: &plan, out_channels, kh: 3, kw: 3 };
    assert_eq!(conv.out_shape().0, [2, 2, 10, 8]);
    let prepared = Prepared::new(ctx.device(), ctx.kernel(), &conv, &input, &weights);
    let outputs = pollster::block_on(conv::run_all(ctx.device(), ctx.queue(), &prepared));
    let want = conv::transposed_on_host(&input, &shape, &transposed, out_channels, 3, 3);
    for (load, out) in Load::ALL.iter().zip(&outputs) {
        let differ = out.iter().zip(&want).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(
            differ,
            0,
            "{load:?}: {differ} of {} outputs differ from the direct transposed convolution",
            out.len()
        );
    }
    assert!(want.iter().any(|&v| v != 0.0));
    common::assert_no_gpu_errors();
}
