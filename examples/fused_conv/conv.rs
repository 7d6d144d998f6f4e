//! A convolution in WGSL (f32, NCHW or NCW, stride 1, no padding of its own) written once and
//! run two ways: over the padded tensor our pad wrote (`Load::Padded`), or over the unpadded
//! input through `wgpu_pad::fused`'s functions (`Load::Fused`), so that no padded tensor is
//! written. Both pipelines share every line but the load, so their outputs agree bit for bit
//! where the pad function is right. Shared by the example (`main.rs`), `tests/fused.rs` and
//! the browser suite; async, so that the browser can drive the readbacks.

use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferRange, PadKernel};
use wgpu_pad::{fused, PadPlan};

/// How the convolution reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// From the padded tensor (our pad first, then the convolution).
    Padded,
    /// From the unpadded input through the fused pad functions, their parameters a uniform
    /// (`fused::wgsl`, one pipeline for every shape).
    Fused,
    /// The same with the plan's parameters baked in (`fused::wgsl_baked`).
    Baked,
}

impl Load {
    /// Every load, the padded one last.
    pub const ALL: [Load; 3] = [Load::Fused, Load::Baked, Load::Padded];
}

/// A convolution of `out_channels` filters of `kh` x `kw` over the padded shape of `plan`
/// (rank 4, [N, C, H, W]; or rank 3, [N, C, W], with `kh` 1).
pub struct Conv<'a> {
    pub plan: &'a PadPlan,
    pub out_channels: usize,
    pub kh: usize,
    pub kw: usize,
}

/// The shader's dimensions uniform: batch, channels, padded height and width, filters,
/// output height and width, output elements.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Dims {
    n: u32,
    c: u32,
    hp: u32,
    wp: u32,
    k: u32,
    ho: u32,
    wo: u32,
    total: u32,
}

impl Conv<'_> {
    fn rank(&self) -> usize {
        self.plan.out_shape().len()
    }

    /// The padded shape as (N, C, H, W), H 1 for rank 3.
    fn padded(&self) -> [usize; 4] {
        match *self.plan.out_shape() {
            [n, c, h, w] => [n, c, h, w],
            [n, c, w] => [n, c, 1, w],
            ref s => panic!("the convolution takes ranks 3 and 4, not {s:?}"),
        }
    }

    /// The output's shape (N, K, Ho, Wo) and element count.
    pub fn out_shape(&self) -> ([usize; 4], usize) {
        let [n, _, hp, wp] = self.padded();
        let s = [n, self.out_channels, hp + 1 - self.kh, wp + 1 - self.kw];
        (s, s.iter().product())
    }

    /// Bytes of the padded tensor, the intermediate the fused load never writes.
    pub fn padded_bytes(&self) -> u64 {
        self.plan.out_len() as u64 * 4
    }

    /// The convolution's WGSL for `load`.
    pub fn wgsl(&self, load: Load) -> String {
        let rank = self.rank();
        let coord = if rank == 4 { "array<u32, 4>(n, c, yy, xx)" } else { "array<u32, 3>(n, c, xx)" };
        let (prelude, body) = match load {
            Load::Padded => (String::new(), "return input[((n * D.c + c) * D.hp + yy) * D.wp + xx];".to_string()),
            Load::Fused | Load::Baked => {
                let (functions, params) = match load {
                    Load::Fused => (
                        fused::wgsl(self.plan.mode(), rank, "pad_").unwrap()
                            + "@group(0) @binding(4) var<uniform> pad: pad_Params;\n",
                        "pad",
                    ),
                    _ => (fused::wgsl_baked(self.plan, "pad_").unwrap(), "pad_params()"),
                };
                let body = format!(
                    "let p = {params};\n    let s = pad_source(p, {coord});\n    if (s == pad_NONE) {{\n        return bitcast<f32>(p.constant.x);\n    }}\n    return input[s];"
                );
                (functions, body)
            }
        };
        format!(
            "{prelude}
struct Dims {{ n: u32, c: u32, hp: u32, wp: u32, k: u32, ho: u32, wo: u32, total: u32 }}
const KH: u32 = {kh}u;
const KW: u32 = {kw}u;
@group(0) @binding(0) var<uniform> D: Dims;
@group(0) @binding(1) var<storage, read> input: array<f32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// Element (n, c, yy, xx) of the padded tensor.
fn load(n: u32, c: u32, yy: u32, xx: u32) -> f32 {{
    {body}
}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= D.total) {{
        return;
    }}
    let x = i % D.wo;
    let t = i / D.wo;
    let y = t % D.ho;
    let t2 = t / D.ho;
    let k = t2 % D.k;
    let n = t2 / D.k;
    var acc = 0.0;
    for (var c = 0u; c < D.c; c++) {{
        for (var dy = 0u; dy < KH; dy++) {{
            for (var dx = 0u; dx < KW; dx++) {{
                acc = acc + weights[((k * D.c + c) * KH + dy) * KW + dx] * load(n, c, y + dy, x + dx);
            }}
        }}
    }}
    out[i] = acc;
}}
",
            kh = self.kh,
            kw = self.kw,
        )
    }
}

/// A case's data: the unpadded input of `shape` and `out_channels` filters of `kh` x `kw` over
/// the padded tensor's channels (`pads` may pad the channel axis too), fixed patterns.
pub fn case_data(shape: &[usize], pads: &[i64], out_channels: usize, kh: usize, kw: usize) -> (Vec<f32>, Vec<f32>) {
    let n: usize = shape.iter().product();
    let input = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0).collect();
    let channels = (shape[1] as i64 + pads[1] + pads[shape.len() + 1]) as usize;
    let weights = (0..out_channels * channels * kh * kw).map(|i| ((i * 104_729) % 97) as f32 / 97.0 - 0.5).collect();
    (input, weights)
}

/// A convolution ready to run: its pipelines, buffers and bind groups on one device.
pub struct Prepared {
    /// Per load (in `Load::ALL`'s order): its pipeline, bind group and output.
    loads: Vec<(wgpu::ComputePipeline, wgpu::BindGroup, wgpu::Buffer)>,
    pad: wgpu_pad::gpu::PreparedPad,
    groups: [u32; 3],
    out_bytes: u64,
}

impl Prepared {
    /// Uploads `input` (the unpadded tensor) and `weights` ([K, C, kh, kw]) and makes both
    /// pipelines; the pad for the padded path is prepared on `kernel`.
    pub fn new(device: &wgpu::Device, kernel: &PadKernel, conv: &Conv, input: &[f32], weights: &[f32]) -> Prepared {
        let storage = |data: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: data, usage })
        };
        let read = wgpu::BufferUsages::STORAGE;
        let input = storage(bytemuck::cast_slice(input), read);
        let weights = storage(bytemuck::cast_slice(weights), read);
        let padded = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("padded"),
            size: conv.padded_bytes().max(4),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let (_, out_len) = conv.out_shape();
        let out_bytes = (out_len * 4) as u64;
        let output = || {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("conv out"),
                size: out_bytes.max(4),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let [n, c, hp, wp] = conv.padded();
        let (oshape, total) = conv.out_shape();
        let dims = Dims {
            n: n as u32,
            c: c as u32,
            hp: hp as u32,
            wp: wp as u32,
            k: conv.out_channels as u32,
            ho: oshape[2] as u32,
            wo: oshape[3] as u32,
            total: total as u32,
        };
        let dims = storage(bytemuck::bytes_of(&dims), wgpu::BufferUsages::UNIFORM);
        let pad_params = storage(&fused::uniform_bytes(conv.plan).unwrap(), wgpu::BufferUsages::UNIFORM);
        let pad = kernel.prepare(conv.plan, BufferRange::whole(&input), BufferRange::whole(&padded)).unwrap();
        let make = |load: Load| {
            let (source, out) = (if load == Load::Padded { &padded } else { &input }, output());
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("conv"),
                source: wgpu::ShaderSource::Wgsl(conv.wgsl(load).into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("conv"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let mut entries = vec![
                wgpu::BindGroupEntry { binding: 0, resource: dims.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: source.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: weights.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: out.as_entire_binding() },
            ];
            if load == Load::Fused {
                entries.push(wgpu::BindGroupEntry { binding: 4, resource: pad_params.as_entire_binding() });
            }
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            (pipeline, bind, out)
        };
        let loads = Load::ALL.map(make).into();
        let groups = (total as u32).div_ceil(64);
        let x = groups.min(65535);
        Prepared { loads, pad, groups: [x, groups.div_ceil(x), 1], out_bytes }
    }

    fn index(load: Load) -> usize {
        Load::ALL.iter().position(|&l| l == load).unwrap()
    }

    /// Records one run of `load` into `encoder`: a fused convolution, or the pad and then
    /// the convolution over the padded tensor.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder, load: Load) {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        if load == Load::Padded {
            self.pad.record(&mut pass);
        }
        let (pipeline, bind, _) = &self.loads[Self::index(load)];
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind, &[]);
        pass.dispatch_workgroups(self.groups[0], self.groups[1], self.groups[2]);
    }

    /// The output of `load`'s last run, read back.
    pub async fn output(&self, device: &wgpu::Device, queue: &wgpu::Queue, load: Load) -> Vec<f32> {
        let source = &self.loads[Self::index(load)].2;
        let size = self.out_bytes.max(4);
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(source, 0, &staging, 0, size);
        queue.submit([enc.finish()]);
        let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            sender.send(r).ok();
        });
        #[cfg(not(target_arch = "wasm32"))]
        device.poll(wgpu::PollType::wait_indefinitely()).expect("the device's poll");
        receiver.receive().await.expect("map callback dropped").expect("map failed");
        let bytes = staging.slice(..).get_mapped_range().unwrap()[..self.out_bytes as usize].to_vec();
        staging.unmap();
        bytemuck::cast_slice(&bytes).to_vec()
    }
}

/// Runs every load once; returns their outputs in `Load::ALL`'s order (fused, baked, padded).
pub async fn run_all(device: &wgpu::Device, queue: &wgpu::Queue, prepared: &Prepared) -> Vec<Vec<f32>> {
    let mut enc = device.create_command_encoder(&Default::default());
    for load in Load::ALL {
        prepared.record(&mut enc, load);
    }
    queue.submit([enc.finish()]);
    let mut outputs = Vec::new();
    for load in Load::ALL {
        outputs.push(prepared.output(device, queue, load).await);
    }
    outputs
}

/// The same convolution on the host over a padded tensor (f64 sums): a check that the shader
/// convolves at all, within rounding.
pub fn on_host(conv: &Conv, padded: &[f32], weights: &[f32]) -> Vec<f32> {
    let [_, c, hp, wp] = conv.padded();
    let ([n, k, ho, wo], total) = conv.out_shape();
    let mut out = vec![0f32; total];
    for (i, o) in out.iter_mut().enumerate() {
        let (x, y, kk, nn) = (i % wo, i / wo % ho, i / wo / ho % k, i / wo / ho / k);
        debug_assert!(nn < n);
        let mut acc = 0f64;
        for cc in 0..c {
            for dy in 0..conv.kh {
                for dx in 0..conv.kw {
                    let w = weights[((kk * c + cc) * conv.kh + dy) * conv.kw + dx] as f64;
                    acc += w * padded[((nn * c + cc) * hp + y + dy) * wp + x + dx] as f64;
                }
            }
        }
        *o = acc as f32;
    }
    out
}

/// A stride-2 transposed convolution (PyTorch's `ConvTranspose2d(c, k, 3, stride=2,
/// padding=1, output_padding=1)`, weights `[C, K, 3, 3]`) as the interior pad a convolution
/// reads: the input dilated by 1 on H and W, then padded by 1 before and 2 after (kernel - 1 -
/// padding, plus output_padding after), under the same filters flipped and their axes
/// swapped. The output is twice the input's height and width.
pub const TRANSPOSED_PADDING: [(i64, i64, i64); 4] = [(0, 0, 0), (0, 0, 0), (1, 2, 1), (1, 2, 1)];

/// Data whose products and sums f32 holds exactly (small integers in, eighths for weights), so
/// that every order of summation gives the same bits: `shape`'s input and `[C, K, kh, kw]`
/// transposed-convolution weights.
pub fn exact_data(shape: &[usize], out_channels: usize, kh: usize, kw: usize) -> (Vec<f32>, Vec<f32>) {
    let n: usize = shape.iter().product();
    let input = (0..n).map(|i| ((i * 7919) % 9) as f32 - 4.0).collect();
    let weights = (0..shape[1] * out_channels * kh * kw).map(|i| ((i * 104_729) % 17) as f32 / 8.0 - 1.0).collect();
    (input, weights)
}

/// The convolution's filters `[K, C, kh, kw]` of transposed-convolution weights `[C, K, kh, kw]`:
/// each flipped in both spatial axes.
pub fn flipped(transposed: &[f32], c: usize, k: usize, kh: usize, kw: usize) -> Vec<f32> {
    let mut w = vec![0f32; transposed.len()];
    for (cc, kk, dy, dx) in (0..c)
        .flat_map(|cc| (0..k).flat_map(move |kk| (0..kh).flat_map(move |dy| (0..kw).map(move |dx| (cc, kk, dy, dx)))))
    {
        w[((kk * c + cc) * kh + dy) * kw + dx] = transposed[((cc * k + kk) * kh + (kh - 1 - dy)) * kw + (kw - 1 - dx)];
    }
    w
}

/// The transposed convolution computed directly on the host, by its definition (each input
/// element scatters its products into the outputs it reaches), stride 2, padding 1, output
/// padding 1, in f32: input `[N, C, H, W]`, weights `[C, K, kh, kw]`, output `[N, K, 2H, 2W]`.
pub fn transposed_on_host(input: &[f32], shape: &[usize], weights: &[f32], k: usize, kh: usize, kw: usize) -> Vec<f32> {
    let [n, c, h, w] = [shape[0], shape[1], shape[2], shape[3]];
    let (ho, wo) = (2 * h, 2 * w);
    let mut out = vec![0f32; n * k * ho * wo];
    for (nn, cc, y, x) in
        (0..n).flat_map(|nn| (0..c).flat_map(move |cc| (0..h).flat_map(move |y| (0..w).map(move |x| (nn, cc, y, x)))))
    {
        let v = input[((nn * c + cc) * h + y) * w + x];
        for kk in 0..k {
            for dy in 0..kh {
                for dx in 0..kw {
                    let (oy, ox) = ((2 * y + dy) as i64 - 1, (2 * x + dx) as i64 - 1);
                    if (0..ho as i64).contains(&oy) && (0..wo as i64).contains(&ox) {
                        let at = ((nn * k + kk) * ho + oy as usize) * wo + ox as usize;
                        out[at] += v * weights[((cc * k + kk) * kh + dy) * kw + dx];
                    }
                }
            }
        }
    }
    out
}
