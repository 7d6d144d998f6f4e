//! Shared test support: the conformance corpus loader.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use wgpu_pad::{npy, DataType, Mode, PadError, PadPlan, PadRequest, Tensor};

/// The corpus: `$WGPU_PAD_CONFORMANCE` if set, else the repository's copy in
/// `tests/data/conformance/cases`. `None` where that copy is absent (the published package
/// leaves it out): the corpus tests then say so and have nothing to run.
pub fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WGPU_PAD_CONFORMANCE").map(PathBuf::from) {
        assert!(dir.is_dir(), "WGPU_PAD_CONFORMANCE={} is not a folder", dir.display());
        return Some(dir);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance/cases");
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "no conformance corpus at {}: nothing to run (the published package leaves it out; set WGPU_PAD_CONFORMANCE to a corpus's cases folder)",
        dir.display()
    );
    None
}

/// Whether the corpus is the repository's own (not `$WGPU_PAD_CONFORMANCE`): only its
/// sizes are known, so only it is held to minimum counts; another corpus must have a case.
pub fn bundled_corpus() -> bool {
    std::env::var_os("WGPU_PAD_CONFORMANCE").is_none()
}

/// Checks a count from a corpus run, printing it: at least `bundled_min` in the bundled
/// corpus, at least `other_min` in another.
pub fn check_count(what: &str, count: usize, bundled_min: usize, other_min: usize) {
    eprintln!("{what}: {count}");
    let (min, corpus) =
        if bundled_corpus() { (bundled_min, "the bundled corpus") } else { (other_min, "$WGPU_PAD_CONFORMANCE") };
    assert!(count >= min, "{what}: only {count} in {corpus} (at least {min})");
}

/// One case of the corpus.
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub dtype: DataType,
    pub mode: String,
    pub pads: Vec<i64>,
    pub axes: Option<Vec<i64>>,
    pub input: Tensor,
    pub input_descr: npy::Descr,
    pub value: Option<Tensor>,
    /// `Ok(expected)` or `Err(error_kind)`.
    pub expect: Result<Tensor, String>,
}

fn load_npy(path: &Path, dtype: DataType) -> (Tensor, npy::Descr) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = npy::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let t = npy::to_tensor(&n, Some(dtype)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (t, n.descr)
}

/// Every case of the corpus; none where there is no corpus (see [`corpus_dir`]).
pub fn cases() -> Vec<Case> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    let mut dirs: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
            let dtype: DataType = json["dtype"].as_str().unwrap().parse().unwrap();
            let ints = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
            let (input, input_descr) = load_npy(&dir.join("input.npy"), dtype);
            let value = dir.join("value.npy").exists().then(|| load_npy(&dir.join("value.npy"), dtype).0);
            let expect = if json["expect"] == "ok" {
                Ok(load_npy(&dir.join("expected.npy"), dtype).0)
            } else {
                Err(json["error_kind"].as_str().unwrap().to_string())
            };
            Case {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                dtype,
                mode: json["mode"].as_str().unwrap().to_string(),
                pads: ints(&json["pads"]),
                axes: (!json["axes"].is_null()).then(|| ints(&json["axes"])),
                input,
                input_descr,
                value,
                expect,
                dir,
            }
        })
        .collect()
}

impl Case {
    /// The plan through the direct API.
    pub fn plan(&self) -> Result<PadPlan, PadError> {
        let mode: Mode = self.mode.parse()?;
        let mut req = PadRequest::new(self.pads.clone()).mode(mode);
        if let Some(a) = &self.axes {
            req = req.axes(a.clone());
        }
        if let Some(v) = &self.value {
            req = req.constant(v.clone());
        }
        PadPlan::new(self.dtype, self.input.shape(), &req)
    }
}

/// Does `err` match the corpus's `error_kind`?
pub fn error_matches(err: &PadError, kind: &str) -> bool {
    matches!(
        (kind, err),
        ("mode", PadError::InvalidMode { .. })
            | ("pads length", PadError::PadsLength { .. })
            | ("axis out of range", PadError::AxisOutOfRange { .. })
            | ("repeated axis", PadError::RepeatedAxis { .. })
            | ("negative output dim", PadError::NegativeOutputDim { .. })
            | ("empty axis after cropping", PadError::EmptyAxis { .. })
    )
}

/// What the message of the corpus's `error_kind` says, as the command line prints it (the
/// error's own words, from `PadError`'s messages).
pub fn error_words(kind: &str) -> &'static str {
    match kind {
        "mode" => "invalid mode",
        "pads length" => "pads has ",
        "axis out of range" => "is out of range for rank",
        "repeated axis" => "is repeated",
        "negative output dim" => "< 0",
        "empty axis after cropping" => "nothing left to",
        _ => panic!("an error kind the corpus format does not have: {kind:?}"),
    }
}

/// Runs every case through `pad`, returning one line per failure.
pub fn run_corpus(mut pad: impl FnMut(&Case, &PadPlan) -> Result<Tensor, PadError>) -> (usize, Vec<String>) {
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let got = case.plan().and_then(|plan| pad(case, &plan));
        match (&case.expect, got) {
            (Ok(want), Ok(got)) if &got == want => {}
            (Ok(want), Ok(got)) => failures.push(format!(
                "{}: got shape {:?}, expected {:?} (data differs: {})",
                case.name,
                got.shape(),
                want.shape(),
                got.data() != want.data()
            )),
            (Ok(_), Err(e)) => failures.push(format!("{}: unexpected error {e}", case.name)),
            (Err(kind), Ok(_)) => failures.push(format!("{}: expected error {kind:?}, got a result", case.name)),
            (Err(kind), Err(e)) if error_matches(&e, kind) => {}
            (Err(kind), Err(e)) => failures.push(format!("{}: expected error {kind:?}, got {e}", case.name)),
        }
    }
    (cases.len(), failures)
}

/// The shared GPU context, or `None` (skip) when no adapter exists — unless
/// `WGPU_PAD_REQUIRE_GPU=1`, when a missing adapter fails the test.
pub fn gpu() -> Option<&'static wgpu_pad::gpu::GpuContext> {
    use std::sync::OnceLock;
    static GPU: OnceLock<Result<wgpu_pad::gpu::GpuContext, String>> = OnceLock::new();
    let ctx = GPU.get_or_init(|| {
        let ctx = wgpu_pad::gpu::GpuContext::new_blocking().map_err(|e| e.to_string())?;
        // The context's own handler only logs, which no test sees: record them instead, for
        // `assert_no_gpu_errors` (and `PadPath::Gpu`) to fail on.
        ctx.device().on_uncaptured_error(std::sync::Arc::new(|e| {
            UNCAPTURED.lock().unwrap_or_else(|e| e.into_inner()).push(e.to_string())
        }));
        Ok(ctx)
    });
    match ctx {
        Ok(ctx) => Some(ctx),
        Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("WGPU_PAD_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// Uncaptured errors of the shared context's device, as they happened.
static UNCAPTURED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Fails if the shared context's device reported an error no scope caught (a test's own
/// submit, say), after letting wgpu deliver what is pending.
pub fn assert_no_gpu_errors() {
    if let Some(ctx) = gpu() {
        let _ = ctx.device().poll(wgpu::PollType::wait_indefinitely());
    }
    let errors = std::mem::take(&mut *UNCAPTURED.lock().unwrap_or_else(|e| e.into_inner()));
    assert!(errors.is_empty(), "uncaptured GPU errors: {errors:#?}");
}

/// A plan over all axes with these pads and mode.
pub fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
    PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
}

/// A storage buffer (also a copy source and target) holding `bytes`, rounded up to whole
/// words with zeros.
pub fn storage(ctx: &wgpu_pad::gpu::GpuContext, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().next_multiple_of(4).max(4), 0);
    ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

/// Copies `len` bytes at `offset` of `buffer` back to the host.
pub fn read(ctx: &wgpu_pad::gpu::GpuContext, buffer: &wgpu::Buffer, offset: u64, len: u64) -> Vec<u8> {
    let size = len.next_multiple_of(4);
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
    ctx.queue().submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    ctx.device().poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let v = staging.slice(..).get_mapped_range().unwrap()[..len as usize].to_vec();
    staging.unmap();
    v
}

/// Bytes of storage binding for [`gpu_small_bindings`]: small enough that most tests'
/// tensors split into several binding windows.
pub const SMALL_BINDING: u64 = 1024;

/// A second device on the same adapter, asking for storage bindings of only
/// [`SMALL_BINDING`] bytes, so that every test run exercises the splitting into binding
/// windows on small tensors. It is made without `MAPPABLE_PRIMARY_BUFFERS`, so its
/// `GpuContext::pad` goes through staging copies where the shared context on a CPU adapter
/// or an integrated GPU maps its buffers: every test runs both. Skips or fails like [`gpu`].
pub fn gpu_small_bindings() -> Option<&'static wgpu_pad::gpu::GpuContext> {
    use std::sync::OnceLock;
    static GPU: OnceLock<Option<wgpu_pad::gpu::GpuContext>> = OnceLock::new();
    GPU.get_or_init(|| {
        let shared = gpu()?;
        let limits = wgpu::Limits { max_storage_buffer_binding_size: SMALL_BINDING, ..shared.device().limits() };
        let adapter = adapter_of(shared);
        let descriptor = wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).expect("a small-binding device");
        let ctx = wgpu_pad::gpu::GpuContext::from_device(&device, &queue, adapter.get_info()).unwrap();
        assert!(!ctx.maps_directly(), "a device without MAPPABLE_PRIMARY_BUFFERS cannot map storage");
        Some(ctx)
    })
    .as_ref()
}

/// The adapter a context's device came from, found again by its info (to make other
/// devices on it).
pub fn adapter_of(ctx: &wgpu_pad::gpu::GpuContext) -> wgpu::Adapter {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .find(|a| a.get_info() == *ctx.adapter_info())
        .expect("the context's adapter")
}

/// A path to run a pad on, so a test is written once and run on each (cubecl/candle style).
#[derive(Clone, Copy)]
pub enum PadPath {
    Cpu,
    Gpu(&'static wgpu_pad::gpu::GpuContext),
}

impl PadPath {
    pub fn pad(&self, plan: &PadPlan, input: &Tensor) -> Result<Tensor, PadError> {
        match self {
            PadPath::Cpu => wgpu_pad::cpu::pad(plan, input),
            PadPath::Gpu(ctx) => {
                let padded = ctx.pad_blocking(plan, input)?;
                // A plan the GPU path can run must have run there, not fallen back quietly. The
                // rule is this test's own, not the product's check_plan (a mutant of which
                // would pass itself): a fixed-width type, a rank the shaders hold before any
                // merging, and a size far inside any device's limits.
                let small = plan.byte_sizes().is_some_and(|(i, o)| i + o < 1 << 26);
                if plan.dtype().gpu_capable() && plan.in_shape().len() <= wgpu_pad::gpu::MAX_RANK && small {
                    assert_eq!(padded.path, wgpu_pad::gpu::ExecPath::Gpu, "{plan:?} fell back");
                }
                assert_no_gpu_errors();
                Ok(padded.tensor)
            }
        }
    }
}

/// Defines `mod $name { fn cpu(); fn gpu(); fn gpu_small_bindings(); }`, running `$body(path)` on each path (the
/// GPU one skips without an adapter unless `WGPU_PAD_REQUIRE_GPU=1`).
#[macro_export]
macro_rules! test_each_path {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn cpu() {
                ($body)(common::PadPath::Cpu)
            }
            #[test]
            fn gpu() {
                if let Some(ctx) = common::gpu() {
                    ($body)(common::PadPath::Gpu(ctx))
                }
            }
            #[test]
            fn gpu_small_bindings() {
                if let Some(ctx) = common::gpu_small_bindings() {
                    ($body)(common::PadPath::Gpu(ctx))
                }
            }
        }
    };
}
