//! Each kernel's lanes store every output word once and load only input words: the real
//! pipelines (`Program::wgsl`), rewritten so that `store_dst` also counts its word's stores
//! and `load_src` keeps the highest input word it reads (atomics in a fourth binding). A
//! variant whose lanes store an element twice, even with the right value, fails here where
//! the outputs alone would pass.

mod common;

use common::KernelVariant;
use common::{gpu, read, storage};
use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

/// `wgsl` with its accesses counted: `counts[0]` the highest input word loaded + 1,
/// `counts[1 + i]` the stores of output word `i` (both within the dispatch's bindings).
fn counted(wgsl: &str) -> String {
    let (load, store) = ("fn load_src(i: u32) -> WORD {\n", "fn store_dst(i: u32, v: WORD) {\n");
    assert!(wgsl.contains(load) && wgsl.contains(store), "access.wgsl's accessors changed: update this test");
    let body = wgsl
        .replace(load, &format!("{load}    atomicMax(&counts[0], i + 1u);\n"))
        .replace(store, &format!("{store}    atomicAdd(&counts[1u + i], 1u);\n"));
    format!("@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;\n{body}")
}

/// Runs `plan`'s program in `variant` with counted accesses over dense buffers; returns the
/// stores of each output word and the end of the highest input word loaded, in bytes.
fn count_accesses(plan: &PadPlan, variant: KernelVariant) -> (Vec<u32>, u64, u64) {
    use wgpu::util::DeviceExt;
    let ctx = gpu().unwrap();
    let device = ctx.device();
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
    let (in_size, out_size) = (in_bytes.next_multiple_of(4).max(16), out_bytes.next_multiple_of(4).max(4));
    let limits = DeviceLimits::from(&device.limits());
    let (iv, ov) = (BufferView::dense(0, in_size), BufferView::dense(0, out_size));
    let program = common::program_in(plan, &iv, &ov, &limits, variant).unwrap();
    let wgsl = program.wgsl(0);
    // The bytes a stored word has: the pipeline's WORD.
    let word = match wgsl.lines().find_map(|l| l.strip_prefix("alias WORD = ")) {
        Some("u32;") => 4,
        Some("vec2<u32>;") => 8,
        Some("vec4<u32>;") => 16,
        other => panic!("the pipeline's WORD: {other:?}"),
    };
    let pipeline = common::compute_pipeline(device, &counted(&wgsl));
    let (input, output) = (storage(ctx, &vec![0; in_size as usize]), storage(ctx, &vec![0; out_size as usize]));
    let empty = storage(ctx, &[0; Program::EMPTY_INPUT_BYTES as usize]);
    let mut stores = vec![0u32; out_size.div_ceil(word) as usize];
    let mut loaded_end = 0;
    for d in program.dispatches() {
        let (out_offset, out_len) = d.output();
        let counts = storage(ctx, &vec![0; (4 + out_len / word * 4) as usize]);
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: d.params(),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let ((in_buffer, (in_offset, in_len)), out_range) =
            (d.input().map_or((&empty, (0, Program::EMPTY_INPUT_BYTES)), |r| (&input, r)), (out_offset, out_len));
        let binding = |buffer, (offset, size): (u64, u64)| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
        };
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: params.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: binding(in_buffer, (in_offset, in_len)) },
                wgpu::BindGroupEntry { binding: 2, resource: binding(&output, out_range) },
                wgpu::BindGroupEntry { binding: 3, resource: counts.as_entire_binding() },
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            let [x, y, z] = d.workgroups();
            pass.dispatch_workgroups(x, y, z);
        }
        ctx.queue().submit([encoder.finish()]);
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&read(ctx, &counts, 0, counts.size()));
        if d.input().is_some() && words[0] > 0 {
            loaded_end = loaded_end.max(in_offset + u64::from(words[0]) * word);
        }
        for (i, &n) in words[1..].iter().enumerate() {
            stores[(out_offset / word) as usize + i] += n;
        }
    }
    (stores, loaded_end, in_size)
}

/// Every mode and every kernel walk, whole, in every kernel variant: each output word
/// stored exactly once, and no load past the input.
#[test]
fn every_kernel_stores_each_output_word_once() {
    if gpu().is_none() {
        return;
    }
    let cases: [(DataType, &[usize], &[i64]); 7] = [
        (DataType::Float32, &[3, 5, 7], &[0, 1, 2, 0, 2, 1]),
        (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
        (DataType::Float16, &[2, 9, 14], &[0, 1, 2, 0, 1, 2]),
        (DataType::Uint8, &[1, 7, 9, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
        (DataType::Uint8, &[5, 1], &[0, 1, 0, 1]),
        (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
        (DataType::Float32, &[1, 4, 64, 64], &[0, 0, 1, 1, 0, 0, 1, 1]), // 4 a lane, 16 a lane
    ];
    // The default on every case and mode; each other variant on long rows of wide and narrow
    // words (where a lane loops over several elements) in two modes, within CI's time.
    let long: [(DataType, &[usize], &[i64]); 4] = [
        (DataType::Float32, &[2, 3000], &[0, 5, 0, 2]),
        (DataType::Float16, &[3, 301], &[1, 2, 0, 3]),
        (DataType::Uint8, &[2, 3001], &[0, 1, 1, 1]),
        (DataType::Uint8, &[2, 9000], &[0, 4, 0, 4]), // long rows in pairs
    ];
    let default = cases.into_iter().flat_map(|c| Mode::ALL.map(move |m| (c, m, KernelVariant::Default)));
    let variants = long
        .into_iter()
        .flat_map(|c| KernelVariant::ALL.iter().flat_map(move |&v| [Mode::Edge, Mode::Wrap].map(move |m| (c, m, v))));
    for ((dtype, shape, pads), mode, variant) in default.chain(variants) {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let (stores, loaded_end, in_size) = count_accesses(&plan, variant);
        let what = format!("{dtype} {shape:?} {mode} ({})", variant.name());
        let wrong = stores.iter().position(|&n| n != 1);
        assert!(wrong.is_none(), "{what}: word {wrong:?} stored {} times", wrong.map_or(0, |i| stores[i]));
        assert!(loaded_end <= in_size, "{what}: a load up to byte {loaded_end} of an input of {in_size}");
    }
    common::assert_no_gpu_errors();
}

/// The interior kernel (its own pipelines) too: every output word once, every width, with crops
/// into the dilation.
#[test]
fn the_interior_kernel_stores_each_output_word_once() {
    if gpu().is_none() {
        return;
    }
    // (type, shape, lax.pad's (low, high, interior) per axis)
    type Case<'a> = (DataType, &'a [usize], &'a [(i64, i64, i64)]);
    let cases: [Case; 5] = [
        (DataType::Float32, &[3, 5], &[(1, 0, 1), (-1, 2, 2)]),
        (DataType::Int64, &[2, 3, 4], &[(0, 1, 0), (1, 1, 1), (0, -1, 3)]),
        (DataType::Complex128, &[3, 2], &[(0, 0, 2), (1, 1, 0)]),
        (DataType::Float16, &[5, 3], &[(2, -1, 1), (0, 1, 1)]),
        (DataType::Uint8, &[4, 7], &[(1, 0, 2), (-2, 3, 1)]),
    ];
    for (dtype, shape, config) in cases {
        let plan = PadPlan::new(dtype, shape, &PadRequest::from_padding_config(config)).unwrap();
        assert!(plan.has_interior());
        let (stores, loaded_end, in_size) = count_accesses(&plan, KernelVariant::Default);
        let wrong = stores.iter().position(|&n| n != 1);
        assert!(wrong.is_none(), "{dtype} {shape:?}: word {wrong:?} stored {} times", wrong.map_or(0, |i| stores[i]));
        assert!(loaded_end <= in_size, "{dtype} {shape:?}: a load up to byte {loaded_end} of an input of {in_size}");
    }
    common::assert_no_gpu_errors();
}
