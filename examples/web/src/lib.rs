//! The web demo's wasm side: pads an RGBA image (`[height, width, 4]` bytes) on WebGPU
//! through [`GpuContext`]'s async path, and on the CPU path (one thread in wasm), for
//! `index.html` to draw and time. The browser test suite lives in `tests/browser.rs`.
//!
//! Nothing here blocks: every GPU call returns a JS promise that the page awaits.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wgpu_pad::gpu::{ExecPath, GpuContext};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

/// Pads images on one WebGPU device.
#[wasm_bindgen]
pub struct Padder {
    gpu: Rc<GpuContext>,
    adapter: String,
}

/// What the browser says about its WebGPU adapter (`GPUAdapterInfo`: vendor, architecture,
/// device, description), which wgpu's `AdapterInfo` leaves empty on WebGPU; `None` without
/// WebGPU.
pub async fn browser_adapter_info() -> Option<String> {
    use js_sys::Reflect;
    use wasm_bindgen::JsCast;
    let get = |object: &JsValue, key: &str| Reflect::get(object, &key.into()).ok().filter(|v| !v.is_undefined());
    let gpu = get(&get(&js_sys::global(), "navigator")?, "gpu")?;
    let request: js_sys::Function = get(&gpu, "requestAdapter")?.dyn_into().ok()?;
    let promise: js_sys::Promise = request.call0(&gpu).ok()?.dyn_into().ok()?;
    let adapter = wasm_bindgen_futures::JsFuture::from(promise).await.ok().filter(|a| !a.is_null())?;
    let info = get(&adapter, "info")?;
    let fields = ["vendor", "architecture", "device", "description"]
        .map(|key| format!("{key}={:?}", get(&info, key).and_then(|v| v.as_string()).unwrap_or_default()));
    Some(fields.join(" "))
}

/// Opens WebGPU's default adapter; rejects with the reason where WebGPU is unavailable.
#[wasm_bindgen(js_name = createPadder)]
pub async fn create_padder() -> Result<Padder, JsError> {
    let gpu = Rc::new(GpuContext::new().await?);
    let adapter = browser_adapter_info().await.unwrap_or_default();
    Ok(Padder { gpu, adapter })
}

/// Every mode's name (`Mode::ALL`), for the page's list: a new mode shows without a change
/// to the page.
#[wasm_bindgen]
pub fn modes() -> Vec<String> {
    Mode::ALL.iter().map(|m| m.name().to_string()).collect()
}

/// The plan for an RGBA image padded on its height and width: `pads` are
/// `[top, left, bottom, right]` (negative crops), `value` the constant for every channel.
fn image_plan(height: usize, width: usize, mode: &str, pads: &[i32], value: u8) -> Result<PadPlan, JsError> {
    let [top, left, bottom, right] = pads else {
        return Err(JsError::new(&format!("pads are [top, left, bottom, right], got {} values", pads.len())));
    };
    let pads = [*top, *left, 0, *bottom, *right, 0].map(i64::from).to_vec();
    let value = Tensor::from_slice(DataType::Uint8, vec![], &[value])?;
    let request = PadRequest::new(pads).mode(mode.parse::<Mode>()?).constant(value);
    Ok(PadPlan::new(DataType::Uint8, &[height, width, 4], &request)?)
}

fn image(height: usize, width: usize, rgba: Vec<u8>) -> Result<Tensor, JsError> {
    Ok(Tensor::from_bytes(DataType::Uint8, vec![height, width, 4], rgba)?)
}

#[wasm_bindgen]
impl Padder {
    /// The adapter WebGPU gave, as [`browser_adapter_info`] says.
    pub fn adapter(&self) -> String {
        self.adapter.clone()
    }

    /// Pads on the GPU; resolves to the padded RGBA bytes (its height and width are
    /// `height + top + bottom` and `width + left + right`).
    #[wasm_bindgen(js_name = padGpu)]
    pub fn pad_gpu(
        &self,
        rgba: Vec<u8>,
        height: usize,
        width: usize,
        mode: String,
        pads: Vec<i32>,
        value: u8,
    ) -> js_sys::Promise {
        let gpu = self.gpu.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let plan = image_plan(height, width, &mode, &pads, value)?;
            let padded = gpu.pad(&plan, &image(height, width, rgba)?).await.map_err(JsError::from)?;
            if let ExecPath::CpuFallback { reason } = padded.path {
                return Err(JsError::new(&format!("the GPU path refused the pad: {reason}")).into());
            }
            let bytes = padded.tensor.bytes().map(|b| b.to_vec()).unwrap_or_default();
            Ok(js_sys::Uint8Array::from(&bytes[..]).into())
        })
    }
}

/// Pads on the CPU path (wasm has no threads: one thread); returns the padded RGBA bytes.
#[wasm_bindgen(js_name = padCpu)]
pub fn pad_cpu(
    rgba: Vec<u8>,
    height: usize,
    width: usize,
    mode: &str,
    pads: Vec<i32>,
    value: u8,
) -> Result<Vec<u8>, JsError> {
    let plan = image_plan(height, width, mode, &pads, value)?;
    let padded = cpu::pad(&plan, &image(height, width, rgba)?)?;
    Ok(padded.bytes().map(|b| b.to_vec()).unwrap_or_default())
}
