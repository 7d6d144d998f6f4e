//! The memory model's figures per case (`--model`, `--model-only`).

use wgpu_pad::gpu::GpuContext;
use wgpu_pad::{PadPlan, Tensor};

/// The model's fields for one case: `model_<figure>_<lanes>` and `model_dispatches`.
pub fn model_fields(
    ctx: &GpuContext,
    plan: &PadPlan,
    input: &Tensor,
    lanes: &[u32],
) -> Result<std::collections::BTreeMap<String, f64>, Box<dyn std::error::Error>> {
    use wgpu_pad::gpu::model;
    let (program, accesses) =
        model::trace(ctx.device(), ctx.queue(), plan, input.bytes(), &model::TraceOptions::default())?;
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("model_dispatches".to_string(), program.dispatches().len() as f64);
    for &n in lanes {
        let f = model::analyze(&accesses, n);
        for (name, value) in [
            ("store_eff", f.store_efficiency),
            ("load_eff", f.load_efficiency),
            ("traffic_over_ideal", f.traffic_over_ideal),
            ("sectors_per_request", f.sectors_per_request),
            ("load_traffic_over_ideal", f.load_traffic_over_ideal),
            ("store_traffic_over_ideal", f.store_traffic_over_ideal),
        ] {
            fields.insert(format!("model_{name}_{n}"), value);
        }
    }
    Ok(fields)
}

pub fn print_model_table(rows: &[(String, std::collections::BTreeMap<String, f64>)], lanes: &[u32]) {
    print!("{:<40} {:>5}", "case (model)", "disp");
    for n in lanes {
        print!(
            " {:>8} {:>8} {:>8} {:>7}",
            format!("store{n}"),
            format!("load{n}"),
            format!("traf{n}"),
            format!("spr{n}")
        );
    }
    println!();
    for (name, f) in rows {
        print!("{:<40} {:>5}", name, f.get("model_dispatches").copied().unwrap_or(0.0));
        for n in lanes {
            let g = |k: &str| f.get(&format!("model_{k}_{n}")).copied().unwrap_or(f64::NAN);
            print!(
                " {:>8.3} {:>8.3} {:>8.3} {:>7.2}",
                g("store_eff"),
                g("load_eff"),
                g("traffic_over_ideal"),
                g("sectors_per_request")
            );
        }
        println!();
    }
}

/// The model per access site of one case (`--model-sites`): which loads and stores cost the
/// sectors.
pub fn print_sites(
    ctx: &GpuContext,
    name: &str,
    plan: &PadPlan,
    input: &Tensor,
    lanes: u32,
) -> Result<(), Box<dyn std::error::Error>> {
    use wgpu_pad::gpu::model;
    let (_, accesses) = model::trace(ctx.device(), ctx.queue(), plan, input.bytes(), &model::TraceOptions::default())?;
    println!("{name}, per access site at {lanes} lanes:");
    println!("  {:>5} {:<6} {:>9} {:>8} {:>7}", "site", "kind", "accesses", "eff", "spr");
    for s in model::analyze_by_site(&accesses, lanes) {
        let (kind, eff) =
            if s.kind.is_load() { ("load", s.figures.load_efficiency) } else { ("store", s.figures.store_efficiency) };
        println!("  {:>5} {:<6} {:>9} {:>8.3} {:>7.2}", s.site, kind, s.accesses, eff, s.figures.sectors_per_request);
    }
    Ok(())
}
