//! The browser suite: WebGPU in headless Chromium (Tint compiles and validates our WGSL, a
//! second compiler beside naga), driven by wasm-bindgen-test. Run it with `bash .ci/browser`.
//!
//! - the whole conformance corpus through `GpuContext`'s async path and the CPU path, bit
//!   for bit (the corpus is bundled at build time; see `build.rs`);
//! - every pipeline variant compiled under Tint, each run against the CPU path;
//! - a pad past WebGPU's default 128 MiB storage-binding limit, split into windows;
//! - views: a slice of a concat on an inner axis, a transposed and a broadcast input;
//! - the embed pattern: a producer pass, a pad, a consumer pass, one submit;
//! - the fused pad: a convolution reading its input through `wgpu_pad::fused`'s functions
//!   equals pad + conv bit for bit, every mode, and a stride-2 transposed convolution through
//!   its interior padding the direct one (examples/fused_conv/conv.rs);
//! - the interior-padding corpus (tests/data/interior) on both paths;
//! - every kernel variant kept for a real GPU to decide, on the corpus and long rows;
//! - the corpus through a JavaScript host: the page's own WebGPU, no wgpu, running the
//!   `Program`s the wasm module makes (docs/HOSTING.md);
//! - the pad's gradient (a lane an element, and 64 elements a workgroup with their long sums
//!   split over the lanes and barriers: Tint checks its uniformity) bit for bit with the CPU's,
//!   in windows along padded axes past a binding too.
//!
//! `.ci/browser` reads the lines that start with `adapter=` and `corpus:`.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};
use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferRange, BufferView, DeviceLimits, ExecPath, GpuContext, PadKernel, Program};
use wgpu_pad::{cpu, npy, DataType, Mode, PadError, PadPlan, PadRequest, Tensor};

wasm_bindgen_test_configure!(run_in_browser);

/// The convolution of the fused-pad example, shared with tests/fused.rs.
#[path = "../../fused_conv/conv.rs"]
#[allow(dead_code)] // the host convolution: the native tests' check
mod conv;

/// One case of the corpus, its files embedded.
struct CorpusCase {
    name: &'static str,
    json: &'static str,
    input: &'static [u8],
    value: Option<&'static [u8]>,
    expected: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

/// One device for the suite (wasm has one thread: a `static` needs `Sync`, so each test
/// opens its own when the first is not there yet).
async fn gpu() -> GpuContext {
    match GpuContext::new().await {
        Ok(ctx) => ctx,
        Err(e) => panic!("WebGPU is unavailable in this browser: {e}"),
    }
}

fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
    PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
}

fn pattern(dtype: DataType, shape: &[usize], seed: u8) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
    let bytes = (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 12) as u8)).collect();
    Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap()
}

fn storage(ctx: &GpuContext, bytes: &[u8]) -> wgpu::Buffer {
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().next_multiple_of(4).max(4), 0);
    ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

/// Reads a whole buffer back, awaiting the map (the browser's event loop drives it).
async fn read(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Vec<u8> {
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    ctx.queue().submit([enc.finish()]);
    let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        sender.send(r).ok();
    });
    receiver.receive().await.expect("map callback dropped").expect("map failed");
    let bytes = staging.slice(..).get_mapped_range().unwrap().to_vec();
    staging.unmap();
    bytes
}

/// Pads with the kernel into fresh buffers; returns the output bytes and the dispatches.
async fn pad_on_kernel(ctx: &GpuContext, kernel: &PadKernel, p: &PadPlan, x: &Tensor) -> (Vec<u8>, usize) {
    let (_, out_bytes) = p.byte_sizes().unwrap();
    let input = storage(ctx, x.bytes().unwrap());
    let output = storage(ctx, &vec![0u8; out_bytes as usize]);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let e = kernel.encode(&mut enc, p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    ctx.queue().submit([enc.finish()]);
    let mut y = read(ctx, &output).await;
    y.truncate(out_bytes as usize);
    (y, e.dispatches)
}

/// The corpus case's tensor: its `.npy` with the type `case.json` names.
fn tensor(bytes: &[u8], dtype: DataType) -> Tensor {
    npy::to_tensor(&npy::parse(bytes).unwrap(), Some(dtype)).unwrap()
}

fn error_matches(err: &PadError, kind: &str) -> bool {
    matches!(
        (kind, err),
        ("mode", PadError::InvalidMode { .. })
            | ("pads length", PadError::PadsLength { .. })
            | ("axis out of range", PadError::AxisOutOfRange { .. })
            | ("repeated axis", PadError::RepeatedAxis { .. })
            | ("negative output dim", PadError::NegativeOutputDim { .. })
            | ("empty axis after cropping", PadError::EmptyAxis { .. })
            | ("interior", PadError::Interior { .. })
    )
}

/// A case's `case.json`, type, input and plan.
fn parse_case(
    &CorpusCase { name, json, input, value, .. }: &CorpusCase,
) -> Result<(serde_json::Value, DataType, Tensor, Result<PadPlan, PadError>), String> {
    let json: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("{name}: case.json: {e}"))?;
    let dtype: DataType = json["dtype"].as_str().unwrap().parse().map_err(|e| format!("{name}: {e}"))?;
    let ints = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>();
    let input = tensor(input, dtype);
    let plan = (|| {
        let mut req = PadRequest::new(ints(&json["pads"])).mode(json["mode"].as_str().unwrap().parse()?);
        if !json["axes"].is_null() {
            req = req.axes(ints(&json["axes"]));
        }
        if let Some(v) = value {
            req = req.constant(tensor(v, dtype));
        }
        if let Some(interior) = json.get("interior") {
            req = req.interior(ints(interior));
        }
        PadPlan::new(dtype, input.shape(), &req)
    })();
    Ok((json, dtype, input, plan))
}

/// Runs one case on both paths; `Err` says what differed.
async fn run_case(gpu: &GpuContext, case: &CorpusCase, on_gpu: &mut usize) -> Result<(), String> {
    let &CorpusCase { name, expected, .. } = case;
    let (json, dtype, input, plan) = parse_case(case)?;
    match (json["expect"].as_str(), plan) {
        (Some("ok"), Ok(plan)) => {
            let want = tensor(expected.ok_or(format!("{name}: no expected.npy"))?, dtype);
            // Both paths run, so a failure names every path that differs.
            let mut wrong = Vec::new();
            match cpu::pad(&plan, &input) {
                Ok(cpu) if cpu == want => {}
                Ok(cpu) => {
                    wrong.push(format!("the CPU path differs (shape {:?}, expected {:?})", cpu.shape(), want.shape()))
                }
                Err(e) => wrong.push(format!("CPU path: {e}")),
            }
            match gpu.pad(&plan, &input).await {
                Ok(padded) if (padded.path == ExecPath::Gpu) != dtype.gpu_capable() => {
                    wrong.push(format!("{dtype} ran on {:?}", padded.path))
                }
                Ok(padded) if padded.tensor == want => *on_gpu += usize::from(padded.path == ExecPath::Gpu),
                Ok(padded) => wrong.push(format!("the GPU path differs (shape {:?})", padded.tensor.shape())),
                Err(e) => wrong.push(format!("GPU path: {e}")),
            }
            match wrong.is_empty() {
                true => Ok(()),
                false => Err(format!("{name}: {}", wrong.join("; "))),
            }
        }
        (Some("error"), Err(e)) if error_matches(&e, json["error_kind"].as_str().unwrap_or("")) => Ok(()),
        (Some("error"), Err(e)) => Err(format!("{name}: expected error {}, got {e}", json["error_kind"])),
        (Some("error"), Ok(_)) => Err(format!("{name}: expected error {}, got a plan", json["error_kind"])),
        (_, Err(e)) => Err(format!("{name}: unexpected error {e}")),
        (expect, Ok(_)) => Err(format!("{name}: unknown expect {expect:?}")),
    }
}

#[wasm_bindgen_test]
async fn corpus_on_webgpu_and_cpu_paths() {
    let gpu = gpu().await;
    let info = wgpu_pad_web::browser_adapter_info().await.expect("no navigator.gpu adapter");
    let limits = gpu.device().limits();
    console_log!("adapter={info} max_storage_buffer_binding_size={}", limits.max_storage_buffer_binding_size);
    let (mut passed, mut failures, mut on_gpu) = (0, Vec::new(), 0);
    for case in CASES {
        match run_case(&gpu, case, &mut on_gpu).await {
            Ok(()) => passed += 1,
            Err(why) => failures.push(why),
        }
    }
    gpu.kernel().pop_errors().await.expect("a GPU error while running the corpus");
    for why in &failures {
        console_log!("FAILED {why}");
    }
    console_log!("corpus: {passed} passed, {} failed ({on_gpu} of them on the GPU; {})", failures.len(), CORPUS_DIR);
    assert!(failures.is_empty(), "{} corpus cases failed", failures.len());
    let (min_cases, min_gpu) = if CORPUS_BUNDLED { (395, 251) } else { (1, 0) };
    assert!(passed >= min_cases, "only {passed} corpus cases at {CORPUS_DIR} (at least {min_cases})");
    assert!(on_gpu >= min_gpu, "only {on_gpu} cases ran on the GPU (at least {min_gpu})");
}

/// The JavaScript host: the page's own WebGPU (`navigator.gpu`), no wgpu. It runs a
/// Program's data, as docs/HOSTING.md describes: one pipeline per WGSL (cached), each dispatch
/// on the one it names, the
/// dispatches' parameters in one uniform buffer at aligned offsets, a bind group and a
/// dispatch each, then the output read back.
#[wasm_bindgen(inline_js = r#"
let state = null;
export async function js_run_program(meta, params, input, inSize, outSize) {
  if (state === null) {
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter.requestDevice();
    state = { device, pipelines: new Map() };
  }
  const device = state.device;
  const m = JSON.parse(meta);
  const pipelines = m.pipelines.map((wgsl) => {
    let pipeline = state.pipelines.get(wgsl);
    if (pipeline === undefined) {
      const module = device.createShaderModule({ code: wgsl });
      pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
      state.pipelines.set(wgsl, pipeline);
    }
    return pipeline;
  });
  // Refused before anything is made, as PadKernel refuses it: a Program made for other
  // limits than this device's, or bindings past the buffers.
  const lim = device.limits;
  const bufferSize = (size) => Math.max(16, Math.ceil(size / 4) * 4);
  for (const d of m.dispatches) {
    for (const [side, b, size] of [["input", d.input, inSize], ["output", d.output, outSize]]) {
      if (b === null) continue;
      if (b[1] > lim.maxStorageBufferBindingSize) {
        throw new Error(`a ${side} binding of ${b[1]} bytes; maxStorageBufferBindingSize is ${lim.maxStorageBufferBindingSize} (the Program was made for other limits)`);
      }
      if (b[0] % lim.minStorageBufferOffsetAlignment !== 0) {
        throw new Error(`a ${side} binding at byte ${b[0]}; minStorageBufferOffsetAlignment is ${lim.minStorageBufferOffsetAlignment} (the Program was made for other limits)`);
      }
      if (b[0] + b[1] > bufferSize(size)) {
        throw new Error(`${side} buffer too small: its binding ends at byte ${b[0] + b[1]} of ${bufferSize(size)}`);
      }
    }
    if (Math.max(...d.groups) > lim.maxComputeWorkgroupsPerDimension) {
      throw new Error(`${Math.max(...d.groups)} workgroups in one dimension; maxComputeWorkgroupsPerDimension is ${lim.maxComputeWorkgroupsPerDimension} (the Program was made for other limits)`);
    }
  }
  device.pushErrorScope("validation");
  const make = (size, usage) => device.createBuffer({ size: Math.max(16, Math.ceil(size / 4) * 4), usage });
  const inBuf = make(inSize, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
  const padded = new Uint8Array(Math.ceil(input.length / 4) * 4);
  padded.set(input);
  device.queue.writeBuffer(inBuf, 0, padded);
  const outBuf = make(outSize, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const empty = make(m.empty_bytes, GPUBufferUsage.STORAGE);
  const align = device.limits.minUniformBufferOffsetAlignment;
  const stride = Math.ceil(m.params_bytes / align) * align;
  const uniform = make(Math.max(1, m.dispatches.length) * stride, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  m.dispatches.forEach((d, i) => {
    device.queue.writeBuffer(uniform, i * stride, params, i * m.params_bytes, m.params_bytes);
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  m.dispatches.forEach((d, i) => {
    const pipeline = pipelines[d.pipeline];
    pass.setPipeline(pipeline);
    const input = d.input === null ? { buffer: empty, offset: 0, size: m.empty_bytes }
                                   : { buffer: inBuf, offset: d.input[0], size: d.input[1] };
    const group = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: uniform, offset: i * stride, size: m.params_bytes } },
        { binding: 1, resource: input },
        { binding: 2, resource: { buffer: outBuf, offset: d.output[0], size: d.output[1] } },
      ],
    });
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(d.groups[0], d.groups[1], d.groups[2]);
  });
  pass.end();
  const readBuf = make(outSize, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  encoder.copyBufferToBuffer(outBuf, 0, readBuf, 0, readBuf.size);
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error !== null) {
    throw new Error(error.message);
  }
  await readBuf.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(readBuf.getMappedRange().slice(0, outSize));
  readBuf.unmap();
  return out;
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn js_run_program(
        meta: String,
        params: Vec<u8>,
        input: Vec<u8>,
        in_size: f64,
        out_size: f64,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
}

/// Runs `plan`'s Program (dense views, `limits`) through the JavaScript host.
async fn pad_in_javascript(plan: &PadPlan, input: &[u8], limits: &DeviceLimits) -> Result<(Vec<u8>, usize), String> {
    pad_in_javascript_at(plan, input, 0, limits).await
}

/// The same with the input at byte `in_offset` of its buffer.
async fn pad_in_javascript_at(
    plan: &PadPlan,
    input: &[u8],
    in_offset: u64,
    limits: &DeviceLimits,
) -> Result<(Vec<u8>, usize), String> {
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
    let (in_size, out_size) = ((in_offset + in_bytes).next_multiple_of(4).max(4), out_bytes.next_multiple_of(4).max(4));
    let program = Program::new(plan, &BufferView::dense(in_offset, in_size), &BufferView::dense(0, out_size), limits)
        .map_err(|e| e.to_string())?;
    let input: Vec<u8> = std::iter::repeat_n(0, in_offset as usize).chain(input.iter().copied()).collect();
    let bytes = program_in_javascript(&program, &input, in_size, out_size, out_bytes).await?;
    Ok((bytes, program.dispatches().len()))
}

/// Runs `program` through the JavaScript host on an input buffer of `in_size` bytes holding
/// `input` and an output buffer of `out_size`; the output's first `out_bytes`.
async fn program_in_javascript(
    program: &Program,
    input: &[u8],
    in_size: u64,
    out_size: u64,
    out_bytes: u64,
) -> Result<Vec<u8>, String> {
    let dispatches: Vec<serde_json::Value> = program
        .dispatches()
        .iter()
        .map(|d| {
            serde_json::json!({ "pipeline": d.pipeline(), "input": d.input(), "output": d.output(), "groups": d.workgroups() })
        })
        .collect();
    let pipelines: Vec<String> = (0..program.pipeline_count()).map(|i| program.wgsl(i)).collect();
    let meta = serde_json::json!({
        "pipelines": pipelines,
        "dispatches": dispatches,
        "params_bytes": Program::PARAMS_BYTES,
        "empty_bytes": Program::EMPTY_INPUT_BYTES,
    });
    let params: Vec<u8> = program.dispatches().iter().flat_map(|d| d.params().to_vec()).collect();
    let out = js_run_program(meta.to_string(), params, input.to_vec(), in_size as f64, out_size as f64)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let mut bytes = js_sys::Uint8Array::new(&out).to_vec();
    bytes.truncate(out_bytes as usize);
    Ok(bytes)
}

/// The pad's gradient as plain data (`Program::backward`) through the JavaScript host (the
/// page's WebGPU, no wgpu): every mode, float32, float16 and two float8s (every pattern of
/// theirs, NaNs too), sums split over a workgroup's lanes; the bits of `cpu::pad_backward`.
#[wasm_bindgen_test]
async fn the_gradient_runs_through_the_javascript_host() {
    let limits = DeviceLimits::WEBGPU_DEFAULT;
    let mut ran = 0;
    for dtype in [DataType::Float32, DataType::Float16, DataType::Float8e4m3fn, DataType::Float8e5m2fnuz] {
        for mode in Mode::ALL {
            for (shape, pads) in [(&[3usize, 5][..], &[1i64, 2, 2, 4][..]), (&[2], &[600, 600]), (&[2, 3], &[100; 4])] {
                let Ok(p) = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)) else { continue };
                let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
                let g: Vec<f32> = (0..p.out_len()).map(|i| ((i * 7919) % 1013) as f32 / 7.0 - 60.0).collect();
                let bytes: Vec<u8> = match dtype {
                    DataType::Float16 => g.iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect(),
                    DataType::Float32 => g.iter().flat_map(|x| x.to_le_bytes()).collect(),
                    _ => (0..p.out_len()).map(|i| (i * 7919 % 251) as u8).collect(),
                };
                let grad = Tensor::from_bytes(dtype, p.out_shape().to_vec(), bytes.clone()).unwrap();
                let (src_size, dst_size) = (out_bytes.next_multiple_of(4), in_bytes.next_multiple_of(4));
                let program =
                    Program::backward(&p, &BufferView::dense(0, src_size), &BufferView::dense(0, dst_size), &limits)
                        .unwrap();
                let what = format!("{dtype} {mode} {shape:?} {pads:?}");
                let got = program_in_javascript(&program, &bytes, src_size, dst_size, in_bytes)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(got, cpu::pad_backward(&p, &grad).unwrap().bytes().unwrap(), "{what}");
                ran += 1;
            }
        }
    }
    console_log!("gradient through the JavaScript host: {ran} plans bit for bit");
    assert!(ran >= 48, "{ran}");
}

/// The gradient past a binding (1 KiB bindings at WebGPU's 256-byte alignment) through the
/// JavaScript host: windows along axes the pad touches, each reading the hull of its images
/// from a binding that may start past the window's own element 0 (the shader's offsets wrap
/// back into it); where a window's reads span the axis (wraps, pads wider than the axis),
/// parts of the sums, each continuing what the one before stored; the bits of
/// `cpu::pad_backward`.
#[wasm_bindgen_test]
async fn gradient_windows_run_through_the_javascript_host() {
    let limits = DeviceLimits { max_binding: 1024, ..DeviceLimits::WEBGPU_DEFAULT };
    for (dtype, shape, pads, mode) in [
        (DataType::Float32, &[20usize, 20][..], &[1i64, 1, 1, 1][..], Mode::Constant),
        (DataType::Float16, &[30, 11], &[4, 3, 2, 5], Mode::Reflect),
        (DataType::Float32, &[30, 12], &[5, -1, 5, 3], Mode::Symmetric),
        (DataType::Float8e4m3fn, &[40, 30], &[2, 1, -3, 6], Mode::Edge),
        (DataType::Float32, &[4, 300], &[1, 1, 0, 0], Mode::Constant),
        // In parts.
        (DataType::Float32, &[20, 20], &[1, 1, 1, 1], Mode::Wrap),
        (DataType::Float16, &[30, 11], &[4, 3, 2, 5], Mode::Wrap),
        (DataType::Float8e4m3fn, &[12, 30], &[20, 1, 25, 2], Mode::Reflect),
    ] {
        let p = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
        let bytes: Vec<u8> = match dtype {
            DataType::Float16 => (0..p.out_len())
                .flat_map(|i| half::f16::from_f32(((i * 7919) % 1013) as f32 / 7.0 - 60.0).to_le_bytes())
                .collect(),
            DataType::Float32 => {
                (0..p.out_len()).flat_map(|i| (((i * 7919) % 1013) as f32 / 7.0 - 60.0).to_le_bytes()).collect()
            }
            _ => (0..p.out_len()).map(|i| (i * 7919 % 251) as u8).collect(),
        };
        let grad = Tensor::from_bytes(dtype, p.out_shape().to_vec(), bytes.clone()).unwrap();
        let (src_size, dst_size) = (out_bytes.next_multiple_of(4), in_bytes.next_multiple_of(4));
        let program =
            Program::backward(&p, &BufferView::dense(0, src_size), &BufferView::dense(0, dst_size), &limits).unwrap();
        let what = format!("{dtype} {mode} {shape:?} {pads:?}");
        assert!(program.dispatches().len() > 1, "{what}: in windows");
        let got = program_in_javascript(&program, &bytes, src_size, dst_size, in_bytes)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got, cpu::pad_backward(&p, &grad).unwrap().bytes().unwrap(), "{what}");
    }
}

/// Round six: the JavaScript host refuses, before making anything, a Program made for
/// other limits than its device's (here a 4-byte storage alignment: an input binding at byte
/// 4, where WebGPU's devices align to 256), and runs the same pad made for its own.
#[wasm_bindgen_test]
async fn the_javascript_host_refuses_programs_made_for_other_limits() {
    let p = plan(DataType::Float32, &[64, 64], &[1, 1, 1, 1], Mode::Edge);
    let x = pattern(DataType::Float32, &[64, 64], 3);
    let fine = DeviceLimits { storage_alignment: 4, ..DeviceLimits::WEBGPU_DEFAULT };
    let e = pad_in_javascript_at(&p, x.bytes().unwrap(), 4, &fine).await.unwrap_err();
    assert!(e.contains("minStorageBufferOffsetAlignment is 256"), "{e}");
    let (got, _) = pad_in_javascript_at(&p, x.bytes().unwrap(), 256, &DeviceLimits::WEBGPU_DEFAULT).await.unwrap();
    assert_eq!(got, cpu::pad(&p, &x).unwrap().bytes().unwrap());
}

/// The whole corpus through the JavaScript host (no wgpu: the page's WebGPU, the programs
/// made by the wasm module), bit for bit: on WebGPU's default limits, and with bindings of
/// 1 KiB so that larger cases run as several binding windows.
#[wasm_bindgen_test]
async fn corpus_through_javascript_webgpu() {
    for (what, limits) in [
        ("WebGPU's default limits", DeviceLimits::WEBGPU_DEFAULT),
        ("1 KiB bindings", DeviceLimits { max_binding: 1024, ..DeviceLimits::WEBGPU_DEFAULT }),
    ] {
        let (mut passed, mut failures, mut split) = (0, Vec::new(), 0);
        for case in CASES {
            let (json, dtype, input, plan) = parse_case(case).unwrap();
            let (Some("ok"), Ok(plan)) = (json["expect"].as_str(), plan) else { continue };
            if !dtype.gpu_capable() {
                continue; // strings and 4-bit types have no program
            }
            let want = tensor(case.expected.unwrap(), dtype);
            match pad_in_javascript(&plan, input.bytes().unwrap(), &limits).await {
                Ok((bytes, _)) if bytes != want.bytes().unwrap() => failures.push(format!("{}: differs", case.name)),
                Ok((_, dispatches)) => {
                    passed += 1;
                    split += usize::from(dispatches > 1);
                }
                Err(e) => failures.push(format!("{}: {e}", case.name)),
            }
        }
        for why in &failures {
            console_log!("FAILED (JavaScript host, {what}) {why}");
        }
        console_log!(
            "JavaScript host, {what}: {passed} corpus cases passed, {} failed, {split} split into windows",
            failures.len()
        );
        assert!(failures.is_empty(), "JavaScript host, {what}: {} cases failed", failures.len());
        let min = if CORPUS_BUNDLED { 251 } else { 1 };
        assert!(passed >= min, "JavaScript host: only {passed} cases (at least {min})");
    }
}

/// The interior-padding corpus through the JavaScript host: the interior kernel's programs run
/// by the page's own WebGPU, on WebGPU's default limits.
#[wasm_bindgen_test]
async fn interior_corpus_through_javascript_webgpu() {
    let mut passed = 0;
    for case in INTERIOR_CASES {
        let (json, dtype, input, plan) = parse_case(case).unwrap();
        let (Some("ok"), Ok(plan)) = (json["expect"].as_str(), plan) else { continue };
        if !dtype.gpu_capable() {
            continue;
        }
        let want = tensor(case.expected.unwrap(), dtype);
        let (bytes, _) = pad_in_javascript(&plan, input.bytes().unwrap(), &DeviceLimits::WEBGPU_DEFAULT).await.unwrap();
        assert!(bytes == want.bytes().unwrap(), "{}: the JavaScript host's output differs", case.name);
        passed += 1;
    }
    assert!(passed >= 40, "only {passed} interior cases through the JavaScript host");
    console_log!("JavaScript host: {passed} interior cases passed");
}

/// A convolution through the fused pad functions (parameters bound, and baked) equals our pad
/// followed by the same convolution, bit for bit under Tint, every mode: an image padded by
/// 1, crops with pads wider than the axis, and audio framing (f32 [1,1,16000] padded by 512).
/// The interior-padding corpus (lax.pad's, tests/data/interior) on both paths: the GPU's its
/// own kernel, under Tint.
#[wasm_bindgen_test]
async fn interior_corpus_on_webgpu_and_cpu_paths() {
    let gpu = gpu().await;
    let (mut on_gpu, mut failures) = (0, Vec::new());
    for case in INTERIOR_CASES {
        if let Err(why) = run_case(&gpu, case, &mut on_gpu).await {
            failures.push(why);
        }
    }
    gpu.kernel().pop_errors().await.expect("a GPU error while running the interior corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(INTERIOR_CASES.len() >= 60 && on_gpu >= 40, "{} cases, {on_gpu} on the GPU", INTERIOR_CASES.len());
    console_log!("interior corpus: {} passed, {on_gpu} on the GPU", INTERIOR_CASES.len());
}

#[wasm_bindgen_test]
async fn fused_convolution_equals_pad_then_conv() {
    let ctx = gpu().await;
    // Shape, pads, filters, and each filter's height and width.
    type Case = (&'static [usize], &'static [i64], usize, (usize, usize));
    let cases: [Case; 3] = [
        (&[2, 3, 9, 7], &[0, 0, 1, 1, 0, 0, 1, 1], 4, (3, 3)),
        (&[1, 2, 5, 5], &[0, 0, -1, 9, 0, 0, 6, -2], 3, (3, 3)),
        (&[1, 1, 16000], &[0, 0, 512, 0, 0, 512], 4, (1, 9)),
    ];
    let mut checked = 0;
    for (shape, pads, out_channels, (kh, kw)) in cases {
        let (input, weights) = conv::case_data(shape, pads, out_channels, kh, kw);
        for mode in Mode::ALL {
            let p = plan(DataType::Float32, shape, pads, mode);
            let c = conv::Conv { plan: &p, out_channels, kh, kw };
            let prepared = conv::Prepared::new(ctx.device(), ctx.kernel(), &c, &input, &weights);
            let outputs = conv::run_all(ctx.device(), ctx.queue(), &prepared).await;
            for (load, out) in conv::Load::ALL.iter().zip(&outputs) {
                let same = out.iter().zip(&outputs[2]).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{mode} {shape:?} {pads:?}: the {load:?} convolution differs from pad + conv");
            }
            checked += 1;
        }
    }
    // A stride-2 transposed convolution through the fused interior pad: the direct one's bits.
    let (shape, out_channels) = ([1, 2, 5, 4], 2);
    let (input, transposed) = conv::exact_data(&shape, out_channels, 3, 3);
    let weights = conv::flipped(&transposed, shape[1], out_channels, 3, 3);
    let request = PadRequest::from_padding_config(&conv::TRANSPOSED_PADDING);
    let p = PadPlan::new(DataType::Float32, &shape, &request).unwrap();
    let c = conv::Conv { plan: &p, out_channels, kh: 3, kw: 3 };
    let prepared = conv::Prepared::new(ctx.device(), ctx.kernel(), &c, &input, &weights);
    let want = conv::transposed_on_host(&input, &shape, &transposed, out_channels, 3, 3);
    for (load, out) in conv::Load::ALL.iter().zip(conv::run_all(ctx.device(), ctx.queue(), &prepared).await) {
        let same = out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "the transposed convolution's {load:?} load differs from the direct one");
    }
    checked += 1;
    ctx.kernel().pop_errors().await.expect("a GPU error in the fused convolutions");
    console_log!("fused: {checked} convolutions equal pad + conv");
}

/// Every kernel variant kept for a real GPU to decide (`KernelVariant`, selected for
/// measurement only) runs the corpus and long 8/16-bit rows bit for bit under Tint, each
/// where it runs another program than the default's: the reference on every such corpus
/// case, the others on every fourth (CI's time; lavapipe runs each on all of them).
#[wasm_bindgen_test]
async fn kernel_variants_run_the_corpus_and_long_rows() {
    use wgpu_pad::gpu::measurement::KernelVariant;
    for variant in KernelVariant::ALL.into_iter().filter(|&v| v != KernelVariant::Default) {
        let gpu = gpu().await;
        wgpu_pad::gpu::measurement::select(gpu.kernel(), variant);
        let (mut failures, mut on_gpu) = (Vec::new(), 0);
        // The design card's reference on every case, the others on a sample (lavapipe runs
        // each on the whole corpus: tests/conformance.rs), within CI's time.
        let every = if variant == KernelVariant::Reference { 1 } else { 4 };
        let own = |case: &&CorpusCase| match parse_case(case) {
            Ok((_, _, _, Ok(plan))) => !wgpu_pad::gpu::measurement::runs_the_default(gpu.kernel(), &plan),
            _ => true,
        };
        for case in CASES.iter().filter(own).step_by(every) {
            if let Err(why) = run_case(&gpu, case, &mut on_gpu).await {
                failures.push(why);
            }
        }
        // Rows of over a workgroup's words: shifted, aligned, several workgroups a row.
        for (dtype, shape, pads) in [
            (DataType::Uint8, [2usize, 9000], [0i64, 3, 0, 5]),
            (DataType::Uint8, [2, 8184], [0, 4, 0, 4]),
            (DataType::Float16, [3, 4092], [0, 1, 0, 3]),
            (DataType::Float32, [3, 3000], [0, 5, 0, 2]),
        ] {
            let x = pattern(dtype, &shape, 5);
            for mode in Mode::ALL {
                let p = plan(dtype, &shape, &pads, mode);
                if wgpu_pad::gpu::measurement::runs_the_default(gpu.kernel(), &p) {
                    continue;
                }
                let (got, _) = pad_on_kernel(&gpu, gpu.kernel(), &p, &x).await;
                if got != cpu::pad(&p, &x).unwrap().bytes().unwrap() {
                    failures.push(format!("{dtype} {shape:?} {pads:?} {mode}"));
                }
            }
        }
        gpu.kernel().pop_errors().await.expect("a GPU error in a kernel variant");
        for why in &failures {
            console_log!("FAILED ({}) {why}", variant.name());
        }
        console_log!("kernel variant {}: {} failed, {on_gpu} corpus cases on the GPU", variant.name(), failures.len());
        assert!(failures.is_empty(), "kernel variant {}: {} cases failed", variant.name(), failures.len());
    }
}

/// All `PadKernel::PIPELINES` pipelines (5 modes, every moved width, both fixed variants) compile under Tint,
/// and pads of each type and mode then run without compiling more, equal to the CPU path.
#[wasm_bindgen_test]
async fn every_pipeline_variant_compiles_and_runs() {
    let ctx = gpu().await;
    let kernel = ctx.kernel();
    let types = [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
        DataType::Complex128,
        DataType::Bool,
        DataType::String,
        DataType::Int4,
    ];
    let pad = wgpu_pad::gpu::ProgramKind::Pad;
    assert_eq!(kernel.precompile(&[pad], &Mode::ALL, &types).await.unwrap(), pad.pipelines());
    let compiled = kernel.compile_count();
    for (i, dtype) in types.iter().filter(|d| d.gpu_capable()).enumerate() {
        for mode in Mode::ALL {
            // A padded innermost axis, and an unpadded one (its rows move as whole words).
            for (shape, pads) in
                [([1usize, 3, 9, 8], [0, 1, 2, 0, 0, 1, i as i64 % 3, 9]), ([4, 5, 6, 8], [1, 0, 2, 0, 0, 3, 1, 0])]
            {
                let p = plan(*dtype, &shape, &pads, mode);
                let x = pattern(*dtype, &shape, i as u8);
                let (got, _) = pad_on_kernel(&ctx, kernel, &p, &x).await;
                assert!(got == cpu::pad(&p, &x).unwrap().bytes().unwrap(), "{dtype} {mode} {shape:?} differs");
            }
        }
    }
    assert_eq!(kernel.compile_count(), compiled, "a precompiled kernel compiled more");
    kernel.pop_errors().await.expect("Tint or WebGPU's validation refused a pipeline or a pad");
}

/// On a device with WebGPU's default 128 MiB storage bindings, a 130 MiB pad runs as
/// several binding windows, bit for bit.
#[wasm_bindgen_test]
async fn past_the_default_binding_limit() {
    let first = gpu().await;
    let limits = wgpu::Limits { max_storage_buffer_binding_size: 128 << 20, ..first.device().limits() };
    drop(first);
    let ctx = GpuContext::with_limits(Some(limits)).await.unwrap();
    assert_eq!(ctx.device().limits().max_storage_buffer_binding_size, 128 << 20);
    let (dtype, n) = (DataType::Float32, 5_800usize);
    let x = pattern(dtype, &[n, n], 3);
    for mode in [Mode::Reflect, Mode::Constant] {
        let p = plan(dtype, &[n, n], &[1, 2, 3, 1], mode);
        let (got, dispatches) = pad_on_kernel(&ctx, ctx.kernel(), &p, &x).await;
        assert!(dispatches > 1, "{mode}: {dispatches} dispatch");
        assert!(got == cpu::pad(&p, &x).unwrap().bytes().unwrap(), "{mode} differs from the CPU path");
    }
    ctx.kernel().pop_errors().await.unwrap();
}

/// Views: pads written into a slice of a concat on the last axis, read from a transpose at
/// an unaligned offset, and from a broadcast row.
#[wasm_bindgen_test]
async fn views_into_and_out_of_larger_buffers() {
    let ctx = gpu().await;
    let (dtype, e) = (DataType::Float32, 4usize);
    // Concat on the last axis: [2, 3, 5, 6] reflect-padded to [2, 3, 7, 8] beside [2, 3, 7, 4].
    let left = plan(dtype, &[2, 3, 5, 6], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Reflect);
    let right = plan(dtype, &[2, 3, 7, 4], &[0, 1, 0, 0, 0, -1, 0, 0], Mode::Edge);
    let (xl, xr) = (pattern(dtype, &[2, 3, 5, 6], 1), pattern(dtype, &[2, 3, 7, 4], 2));
    let strides = [3 * 7 * 12u64, 7 * 12, 12, 1];
    let (base, total) = (3usize, 3 + 2 * 3 * 7 * 12 + 5);
    let concat = storage(&ctx, &vec![0xEE; total * e]);
    let (il, ir) = (storage(&ctx, xl.bytes().unwrap()), storage(&ctx, xr.bytes().unwrap()));
    let out = |first: usize| BufferRange::at(&concat, ((base + first) * e) as u64).with_strides(&strides);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    ctx.kernel().encode(&mut enc, &left, BufferRange::whole(&il), out(0)).unwrap();
    ctx.kernel().encode(&mut enc, &right, BufferRange::whole(&ir), out(8)).unwrap();
    ctx.queue().submit([enc.finish()]);
    let got = read(&ctx, &concat).await;
    let mut want = vec![0xEEu8; got.len()];
    for (y, first, width) in [(cpu::pad(&left, &xl).unwrap(), 0, 8), (cpu::pad(&right, &xr).unwrap(), 8, 4)] {
        for (row, chunk) in y.bytes().unwrap().chunks(width * e).enumerate() {
            let at = (base + row * 12 + first) * e;
            want[at..at + chunk.len()].copy_from_slice(chunk);
        }
    }
    assert!(got == want, "the concat differs");

    // A [9, 7] tensor read as its transpose [7, 9], 5 elements into its buffer.
    let stored = pattern(dtype, &[9, 7], 5);
    let sb = stored.bytes().unwrap();
    let mut t = vec![0u8; sb.len()];
    for i in 0..7 {
        for j in 0..9 {
            t[(i * 9 + j) * e..(i * 9 + j + 1) * e].copy_from_slice(&sb[(j * 7 + i) * e..(j * 7 + i + 1) * e]);
        }
    }
    let transposed = Tensor::from_bytes(dtype, vec![7, 9], t).unwrap();
    let row = pattern(dtype, &[9], 8);
    let broadcast = Tensor::from_bytes(dtype, vec![4, 9], row.bytes().unwrap().repeat(4)).unwrap();
    for mode in Mode::ALL {
        let p = plan(dtype, &[7, 9], &[2, 1, 3, 4], mode);
        let input = storage(&ctx, &[vec![0u8; 5 * e], sb.to_vec()].concat());
        let (_, out_bytes) = p.byte_sizes().unwrap();
        let output = storage(&ctx, &vec![0u8; out_bytes as usize]);
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        let view = BufferRange::at(&input, 5 * e as u64).with_strides(&[1, 7]);
        ctx.kernel().encode(&mut enc, &p, view, BufferRange::whole(&output)).unwrap();
        ctx.queue().submit([enc.finish()]);
        assert!(read(&ctx, &output).await == cpu::pad(&p, &transposed).unwrap().bytes().unwrap(), "{mode}: transpose");

        let p = plan(dtype, &[4, 9], &[1, 2, 0, 3], mode);
        let input = storage(&ctx, row.bytes().unwrap());
        let (_, out_bytes) = p.byte_sizes().unwrap();
        let output = storage(&ctx, &vec![0u8; out_bytes as usize]);
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        let view = BufferRange::whole(&input).with_strides(&[0, 1]);
        ctx.kernel().encode(&mut enc, &p, view, BufferRange::whole(&output)).unwrap();
        ctx.queue().submit([enc.finish()]);
        assert!(read(&ctx, &output).await == cpu::pad(&p, &broadcast).unwrap().bytes().unwrap(), "{mode}: broadcast");
    }
    ctx.kernel().pop_errors().await.unwrap();
}

/// An engine's pattern: its producer pass, a prepared pad recorded into the engine's own
/// open pass, a consumer pass, one submit.
#[wasm_bindgen_test]
async fn embedded_between_an_engines_passes() {
    let ctx = gpu().await;
    let device = ctx.device();
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("engine"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read_write> a: array<f32>;
             @group(0) @binding(1) var<storage, read_write> b: array<f32>;
             @compute @workgroup_size(64) fn produce(@builtin(global_invocation_id) id: vec3<u32>) {
                 if (id.x < arrayLength(&a)) { a[id.x] = f32(id.x) * 0.5 + 1.0; }
             }
             @compute @workgroup_size(64) fn consume(@builtin(global_invocation_id) id: vec3<u32>) {
                 if (id.x < arrayLength(&a)) { b[id.x] = a[id.x] * 2.0; }
             }"
            .into(),
        ),
    });
    let pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &shader,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (produce, consume) = (pipeline("produce"), pipeline("consume"));
    let shape = [3usize, 10, 12];
    let p = plan(DataType::Float32, &shape, &[0, 2, 1, 0, 1, 3], Mode::Symmetric);
    let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
    let (x, y, z) = (
        storage(&ctx, &vec![0; in_bytes as usize]),
        storage(&ctx, &vec![0; out_bytes as usize]),
        storage(&ctx, &vec![0; out_bytes as usize]),
    );
    // Layouts derived from each entry point: `produce` binds only `a`.
    let bind = |pipeline: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer]| {
        let entries: Vec<_> = (0u32..)
            .zip(buffers)
            .map(|(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    };
    let (produce_bg, consume_bg) = (bind(&produce, &[&x]), bind(&consume, &[&y, &z]));
    let pad = ctx.kernel().prepare(&p, BufferRange::whole(&x), BufferRange::whole(&y)).unwrap();
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&produce);
        pass.set_bind_group(0, &produce_bg, &[]);
        pass.dispatch_workgroups((in_bytes as u32 / 4).div_ceil(64), 1, 1);
        pad.record(&mut pass);
        pass.set_pipeline(&consume);
        pass.set_bind_group(0, &consume_bg, &[]);
        pass.dispatch_workgroups((out_bytes as u32 / 4).div_ceil(64), 1, 1);
    }
    ctx.queue().submit([enc.finish()]);
    let produced: Vec<f32> = (0..in_bytes / 4).map(|i| i as f32 * 0.5 + 1.0).collect();
    let padded = cpu::pad(&p, &Tensor::from_slice(DataType::Float32, shape.to_vec(), &produced).unwrap()).unwrap();
    let want: Vec<f32> = padded.as_slice::<f32>().unwrap().iter().map(|v| v * 2.0).collect();
    let got = read(&ctx, &z).await;
    assert!(got == bytemuck_bytes(&want), "the consumer's output differs");
    ctx.kernel().pop_errors().await.unwrap();
}

fn bytemuck_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// The CPU path in wasm: one thread, no panic, on an output large enough that native
/// builds would split it across threads.
/// The pad's gradient under Tint: both pipelines of every mode (a lane an element; 64
/// elements a workgroup, a wrap of many periods split over its lanes) give the CPU's bits.
#[wasm_bindgen_test]
async fn the_gradient_is_the_cpus_bit_for_bit() {
    let gpu = gpu().await;
    // Tint's own word on the pipelines, where it refuses one.
    for (pads, split) in [(&[1i64, 1][..], "a lane"), (&[600, 600], "split")] {
        let p = plan(DataType::Float32, &[2], pads, Mode::Wrap);
        let (i, o) = p.byte_sizes().unwrap();
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let program = Program::backward(&p, &BufferView::dense(0, o), &BufferView::dense(0, i), &limits).unwrap();
        for i in 0..program.pipeline_count() {
            let module = gpu.device().create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(program.wgsl(i).into()),
            });
            for m in module.get_compilation_info().await.messages {
                let line = m.location.map(|l| l.line_number);
                console_log!("gradient ({split}), pipeline {i}: {:?} at line {line:?}: {}", m.message_type, m.message);
            }
        }
    }
    // float32, the 16-bit floats (two to a word, stored by atomics, each sum rounded) and a
    // float8 (four to a word); sums split over a workgroup's lanes in blocks (a wrap by 600)
    // and term by term (pads of 100 on two axes).
    let mut ran = 0;
    for dtype in [DataType::Float32, DataType::Float16, DataType::Bfloat16, DataType::Float8e5m2] {
        for mode in Mode::ALL {
            for (shape, pads) in [
                (&[3usize, 5][..], &[1i64, 2, 2, 4][..]),
                (&[2, 3], &[-1, 1, 3, 2]),
                (&[2], &[600, 600]),
                (&[2, 3], &[100; 4]),
            ] {
                let Ok(p) = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)) else {
                    continue;
                };
                let g: Vec<f32> = (0..p.out_len()).map(|i| ((i * 7919) % 1013) as f32 / 7.0 - 60.0).collect();
                let grad = match dtype {
                    DataType::Float16 => {
                        let h: Vec<half::f16> = g.iter().map(|&x| half::f16::from_f32(x)).collect();
                        Tensor::from_slice(dtype, p.out_shape().to_vec(), &h).unwrap()
                    }
                    DataType::Bfloat16 => {
                        let h: Vec<half::bf16> = g.iter().map(|&x| half::bf16::from_f32(x)).collect();
                        Tensor::from_slice(dtype, p.out_shape().to_vec(), &h).unwrap()
                    }
                    DataType::Float32 => Tensor::from_slice(dtype, p.out_shape().to_vec(), &g).unwrap(),
                    // Every pattern, NaNs and infinities too.
                    _ => {
                        let patterns = (0..p.out_len()).map(|i| (i * 7919 % 251) as u8).collect();
                        Tensor::from_bytes(dtype, p.out_shape().to_vec(), patterns).unwrap()
                    }
                };
                let got = gpu.pad_backward(&p, &grad).await.unwrap();
                let what = format!("{dtype} {mode} {shape:?} {pads:?}");
                assert_eq!(got.path, ExecPath::Gpu, "{what}");
                assert_eq!(got.tensor.bytes(), cpu::pad_backward(&p, &grad).unwrap().bytes(), "{what}");
                ran += 1;
            }
        }
    }
    console_log!("gradient: {ran} plans bit for bit");
    assert!(ran >= 68, "{ran}");
}

#[wasm_bindgen_test]
fn cpu_path_runs_on_one_thread() {
    assert_eq!(cpu::threads(), 1);
    let x = pattern(DataType::Uint8, &[64, 256, 256], 9);
    let p = plan(DataType::Uint8, &[64, 256, 256], &[1, 2, 3, 4, 5, 6], Mode::Wrap);
    let y = cpu::pad(&p, &x).unwrap();
    assert_eq!(y.shape(), &[69, 263, 265]);
    assert_eq!(y.bytes().unwrap()[(263 + 2) * 265 + 3], x.bytes().unwrap()[0]);
}
