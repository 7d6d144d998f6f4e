//! The main job in a minute: pad a real tensor in every mode on whatever adapter this
//! machine has (the CPU path if none), print the results, and check each against the CPU
//! path bit for bit. Writes the reflect-padded tensor to `target/demo_reflect.npy`.
//!
//! ```text
//! cargo run --release --example demo
//! ```

use wgpu_pad::gpu::{ExecPath, GpuContext};
use wgpu_pad::{cpu, npy, DataType, Mode, PadPlan, PadRequest, Tensor};

fn show(t: &Tensor) {
    let [rows, cols] = [t.shape()[0], t.shape()[1]];
    let v = t.as_slice::<f32>().expect("f32");
    for r in 0..rows {
        let line: Vec<String> = v[r * cols..(r + 1) * cols].iter().map(|x| format!("{x:>4}")).collect();
        println!("    {}", line.join(" "));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles=off")).init();
    // A 3 x 4 tile of a ramp: row r, column c holds 10 r + c.
    let values: Vec<f32> = (0..3).flat_map(|r| (0..4).map(move |c| (10 * r + c) as f32)).collect();
    let x = Tensor::from_slice(DataType::Float32, vec![3, 4], &values)?;
    println!("input [3, 4]:");
    show(&x);

    let gpu = match GpuContext::new_blocking() {
        Ok(g) => {
            println!("\ndevice: {} ({:?})", g.adapter_info().name, g.adapter_info().backend);
            Some(g)
        }
        // Where a GPU is required (CI), comparing the CPU path with itself proves nothing.
        Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            return Err(format!("WGPU_PAD_REQUIRE_GPU=1 but no GPU: {e}").into());
        }
        Err(e) => {
            println!("\ndevice: CPU path ({e}); the GPU is not checked");
            None
        }
    };
    // Two rows above, one below; crop one column on the left, add three on the right.
    let pads = vec![2, -1, 1, 3];
    for mode in Mode::ALL {
        let mut request = PadRequest::new(pads.clone()).mode(mode);
        if mode == Mode::Constant {
            request = request.constant(Tensor::from_slice(DataType::Float32, vec![], &[-1f32])?);
        }
        let plan = PadPlan::new(x.dtype(), x.shape(), &request)?;
        let (y, path) = match &gpu {
            Some(g) => {
                let p = g.pad_blocking(&plan, &x)?;
                (p.tensor, if p.path == ExecPath::Gpu { "gpu" } else { "cpu" })
            }
            None => (cpu::pad(&plan, &x)?, "cpu"),
        };
        // Where a GPU is required (CI), a pad the context ran on the CPU path proves nothing.
        if gpu.is_some() && path != "gpu" && std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            return Err(format!("{mode}: WGPU_PAD_REQUIRE_GPU=1 but the pad fell back to the CPU path").into());
        }
        let same = y == cpu::pad(&plan, &x)?;
        println!("\n{mode} pads {pads:?} -> {:?} on the {path}, equal to the CPU path: {same}", y.shape());
        show(&y);
        if !same {
            return Err(format!("{mode}: GPU and CPU differ").into());
        }
        if mode == Mode::Reflect {
            // The crate's `target/`, made here where the build went elsewhere (CARGO_TARGET_DIR).
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
            let out = dir.join("demo_reflect.npy");
            let bytes = npy::to_bytes(&y, &npy::Descr::parse("<f4")?)?;
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&out, bytes))
                .map_err(|e| format!("writing {}: {e}", out.display()))?;
            println!("    (written to {})", out.display());
        }
    }
    Ok(())
}
