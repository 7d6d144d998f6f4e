//! Outputs: the table, the SVG chart, CSV and Markdown.

use crate::measure::Record;

pub fn case_name(r: &Record) -> String {
    let shape: Vec<String> = r.shape.iter().map(|d| d.to_string()).collect();
    format!("{} [{}] {}", r.dtype, shape.join(","), r.mode)
}

pub fn print_table(records: &[Record]) {
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>7} {:>8} {:>7} {:>8} {:>7} {:>9} {:>8} {:>9} {:>7} {:>8} {:>9} {:>9} {:>7} {:>9} {:>7} {:>8} {:>8}",
        "case",
        "out MiB",
        "cpu ms",
        "fresh ms",
        "fr/cpu",
        "arena ms",
        "ar/cpu",
        "memcpy",
        "cpu/mc",
        "kernel ms",
        "copy ms",
        "cshad ms",
        "k/copy",
        "k/cshad",
        "e2e pool",
        "e2e new",
        "pool/t",
        "k wall",
        "pool/kw",
        "speedup",
        "kb/copyb"
    );
    for r in records {
        let noisy = if r.noisy.is_empty() { "" } else { " *" };
        println!(
            "{:<34} {:>8.2} {:>8.3} {:>8.3} {:>7.2} {:>8.3} {:>7.2} {:>8.3} {:>7.2} {:>9.3} {:>8.3} {:>9.3} {:>7.2} {:>8.2} {:>9.2} {:>9.2} {:>7.2} {:>9.3} {:>7.2} {:>8.2} {:>8.2}",
            format!("{}{noisy}", case_name(r)),
            r.out_bytes as f64 / (1 << 20) as f64,
            r.cpu_ms,
            r.cpu_fresh_ms,
            r.cpu_fresh_over_cpu,
            r.cpu_arena_ms,
            r.cpu_arena_over_cpu,
            r.memcpy_ms,
            r.cpu_over_memcpy,
            r.gpu_kernel_ms,
            r.gpu_copy_ms,
            r.gpu_copy_shader_ms,
            r.gpu_kernel_over_gpu_copy,
            r.gpu_kernel_over_gpu_copy_shader,
            r.gpu_e2e_pooled_ms,
            r.gpu_e2e_fresh_ms,
            r.gpu_e2e_pooled_over_kernel_and_copies,
            r.gpu_kernel_wall_ms,
            r.gpu_e2e_pooled_over_kernel_wall,
            r.gpu_speedup_over_cpu,
            r.extra.get("gpu_kernel_batch_over_gpu_copy_batch").copied().unwrap_or(f64::NAN)
        );
    }
}

pub fn write_svg(path: &std::path::Path, records: &[Record]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    // Outputs under 1 MiB measure fixed costs, not bandwidth: their GB/s would set the scale.
    let records: Vec<Record> = records.iter().filter(|r| r.out_bytes >= 1 << 20).cloned().collect();
    let records = &records[..];
    type Series = (&'static str, RGBColor, fn(&Record) -> f64);
    let series: [Series; 9] = [
        ("CPU pad into a preallocated output", RGBColor(66, 133, 244), |r| r.cpu_gbps),
        ("CPU pad, output allocated (cpu::pad)", RGBColor(30, 80, 170), |r| r.cpu_fresh_gbps),
        ("CPU pad, output from an arena (cpu::pad_in)", RGBColor(100, 60, 160), |r| r.cpu_arena_gbps),
        ("host memcpy", RGBColor(160, 190, 240), |r| r.memcpy_gbps),
        ("GPU pad kernel", RGBColor(219, 68, 55), |r| r.gpu_kernel_gbps),
        ("GPU copy shader (one u32 per invocation)", RGBColor(245, 150, 60), |r| r.gpu_copy_shader_gbps),
        ("GPU buffer copy", RGBColor(240, 170, 160), |r| r.gpu_copy_gbps),
        ("GPU end to end, pooled buffers", RGBColor(15, 157, 88), |r| r.gpu_e2e_pooled_gbps),
        ("GPU end to end, new buffers", RGBColor(140, 210, 160), |r| r.gpu_e2e_fresh_gbps),
    ];
    let top = records.iter().flat_map(|r| series.iter().map(move |s| (s.2)(r))).fold(0.0, f64::max) * 1.1;
    // Empty rows below the last case hold the legend, so it covers no bar.
    let legend_rows = 3;
    let height = 160 + 26 * 4 * (records.len() + legend_rows) as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Pad throughput, GB/s of output, outputs of 1 MiB and more (GPU: {})",
        records.first().map_or("", |r| r.adapter.as_str())
    );
    let n = records.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(260)
        .build_cartesian_2d(0.0..top.max(0.001), (n + legend_rows as f64)..0.0)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels((records.len() + legend_rows) * 2 + 1)
        .y_label_formatter(&|y| {
            let i = (*y - 0.5).round();
            if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < records.len() {
                case_name(&records[i as usize])
            } else {
                String::new()
            }
        })
        .x_desc("output bytes per second, GB/s (higher is faster)")
        .draw()?;
    for (k, (name, color, value)) in series.iter().enumerate() {
        let color = *color;
        chart
            .draw_series(records.iter().enumerate().map(|(i, r)| {
                let y0 = i as f64 + 0.05 + k as f64 * 0.1;
                Rectangle::new([(0.0, y0), (value(r), y0 + 0.09)], color.filled())
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The columns of the CSV and Markdown outputs: (header, value).
/// A named column of a record.
type Column = (&'static str, fn(&Record) -> f64);

const COLUMNS: [Column; 12] = [
    ("out_bytes", |r| r.out_bytes as f64),
    ("cpu_ms", |r| r.cpu_ms),
    ("cpu_fresh_ms", |r| r.cpu_fresh_ms),
    ("cpu_arena_ms", |r| r.cpu_arena_ms),
    ("memcpy_ms", |r| r.memcpy_ms),
    ("gpu_kernel_ms", |r| r.gpu_kernel_ms),
    ("gpu_copy_ms", |r| r.gpu_copy_ms),
    ("gpu_copy_shader_ms", |r| r.gpu_copy_shader_ms),
    ("gpu_e2e_pooled_ms", |r| r.gpu_e2e_pooled_ms),
    ("gpu_e2e_fresh_ms", |r| r.gpu_e2e_fresh_ms),
    ("gpu_kernel_over_gpu_copy", |r| r.gpu_kernel_over_gpu_copy),
    ("gpu_kernel_over_gpu_copy_shader", |r| r.gpu_kernel_over_gpu_copy_shader),
];

/// One row per case: the case, the columns above, and every extra figure (intervals, MAD,
/// the model's) in a fixed order.
pub fn write_csv(path: &std::path::Path, records: &[Record]) -> Result<(), Box<dyn std::error::Error>> {
    let extra: std::collections::BTreeSet<&String> = records.iter().flat_map(|r| r.extra.keys()).collect();
    let mut out = String::from("case");
    for (name, _) in COLUMNS {
        out += &format!(",{name}");
    }
    for k in &extra {
        out += &format!(",{k}");
    }
    out += ",noisy\n";
    for r in records {
        out += &format!("\"{}\"", case_name(r));
        for (_, value) in COLUMNS {
            out += &format!(",{}", value(r));
        }
        for k in &extra {
            out += &r.extra.get(*k).map_or(",".to_string(), |v| format!(",{v}"));
        }
        out += &format!(",\"{}\"\n", r.noisy.join(" "));
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// The table as Markdown, under the machine's summary.
pub fn write_markdown(
    path: &std::path::Path,
    machine: &crate::machine::Machine,
    records: &[Record],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = format!("Machine: {}\n\n| case |", machine.summary());
    for (name, _) in COLUMNS {
        out += &format!(" {name} |");
    }
    out += " noisy |\n|---|";
    out += &"---|".repeat(COLUMNS.len() + 1);
    out += "\n";
    for r in records {
        out += &format!("| {} |", case_name(r));
        for (_, value) in COLUMNS {
            out += &format!(" {:.4} |", value(r));
        }
        out += &format!(" {} |\n", r.noisy.join(", "));
    }
    std::fs::write(path, out)?;
    Ok(())
}
