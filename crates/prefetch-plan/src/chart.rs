//! `replay --chart out.svg`: hit ratio against capacity, on a log scale,
//! one line per ratio kind (blocks, tokens, mean per request), with
//! plotters' SVG backend (the plotting crate criterion uses).

use std::path::Path;

use kv_replay::Report;
use plotters::prelude::*;

use crate::error::CliError;

/// A chart's data: the swept tier's name, and per capacity (in blocks) the
/// three hit ratios (blocks, tokens, mean per request).
pub type ChartPoints = (String, Vec<(f64, [f64; 3])>);

/// The swept tier's capacity and the three ratios of each report with a
/// finite, non-zero capacity there (a log axis has no room for 0 or
/// `inf`), sorted by capacity.
///
/// # Errors
///
/// [`CliError::BadOption`] unless exactly one tier's capacity varies over
/// at least two plottable points.
pub fn points(reports: &[Report]) -> Result<ChartPoints, CliError> {
    let bad = |message: &str| CliError::BadOption { option: "--chart", message: message.to_owned() };
    let Some(first) = reports.first() else { return Err(bad("nothing was replayed")) };
    let capacity_of = |report: &Report, tier: usize| {
        if tier == 0 { report.l1.capacity_blocks } else { report.l2[tier - 1].capacity_blocks }
    };
    let varying: Vec<usize> = (0..=first.l2.len())
        .filter(|&tier| reports.iter().any(|report| capacity_of(report, tier) != capacity_of(first, tier)))
        .collect();
    let [tier] = varying[..] else {
        return Err(bad("the chart plots a sweep of one tier's capacity (--l1 1e3,1e4,... or one --l2)"));
    };
    let mut points: Vec<(f64, [f64; 3])> = reports
        .iter()
        .filter_map(|report| {
            let blocks = capacity_of(report, tier).filter(|&blocks| blocks > 0)?;
            let ratio = &report.hit_ratio;
            Some((blocks as f64, [ratio.block, ratio.token, ratio.request_mean]))
        })
        .collect();
    if points.len() < 2 {
        return Err(bad("a chart needs at least two finite, non-zero capacities"));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let name = if tier == 0 { "L1".to_owned() } else { format!("L2 adapter {}", tier - 1) };
    Ok((name, points))
}

/// Draws the chart of `reports` into the SVG file at `path`.
///
/// # Errors
///
/// As [`points`]; [`CliError::Io`] if the file cannot be written.
pub fn draw(path: &Path, reports: &[Report]) -> Result<(), CliError> {
    let (tier, points) = points(reports)?;
    let failed = |error: String| CliError::Io {
        context: format!("drawing {}", path.display()),
        source: std::io::Error::other(error),
    };
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|error| failed(error.to_string()))?;
    let (low, high) = (points[0].0, points[points.len() - 1].0);
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("hit ratio against {tier} capacity"), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d((low..high).log_scale(), 0.0..1.0)
        .map_err(|error| failed(error.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(format!("{tier} capacity (blocks)"))
        .y_desc("hit ratio")
        .x_label_formatter(&|blocks| format!("{blocks:e}"))
        .draw()
        .map_err(|error| failed(error.to_string()))?;
    let kinds = [("blocks (Σh / Σn)", RED), ("tokens", BLUE), ("mean per request", GREEN)];
    for (kind, (label, color)) in kinds.into_iter().enumerate() {
        let line = points.iter().map(|&(x, ratios)| (x, ratios[kind]));
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(|error| failed(error.to_string()))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(line.map(|point| Circle::new(point, 3, color.filled())))
            .map_err(|error| failed(error.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|error| failed(error.to_string()))?;
    root.present().map_err(|error| failed(error.to_string()))
}

#[cfg(test)]
mod tests {
    use kv_replay::{ReplayConfig, Trace, sweep};

    use super::*;

    fn reports(l1: &[Option<usize>], l2: &[Option<usize>]) -> Vec<Report> {
        let mut trace = Trace::new(512);
        for keys in [&[1, 2, 3][..], &[1, 2, 4], &[5, 1, 2, 3]] {
            trace.push(keys, keys.len() as u64 * 512);
        }
        let base = ReplayConfig::new(None, &[None]);
        let configs = sweep::combinations(&base, l1, &[l2.to_vec()]);
        sweep::replay_all(&trace, &configs).unwrap()
    }

    #[test]
    fn one_tier_must_vary() {
        let (tier, plotted) = points(&reports(&[Some(4), None, Some(0), Some(1)], &[None])).unwrap();
        assert_eq!((tier.as_str(), plotted.iter().map(|p| p.0).collect::<Vec<_>>()), ("L1", vec![1.0, 4.0]));
        let (tier, _) = points(&reports(&[Some(1)], &[Some(2), Some(8)])).unwrap();
        assert_eq!(tier, "L2 adapter 0");
        assert!(points(&reports(&[Some(1), Some(2)], &[Some(2), Some(8)])).is_err());
        assert!(points(&reports(&[Some(1), None], &[None])).is_err());
    }

    #[test]
    fn draws_an_svg() {
        let path = std::env::temp_dir().join(format!("prefetch-plan-chart-{}.svg", std::process::id()));
        draw(&path, &reports(&[Some(1), Some(2), Some(4)], &[None])).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("hit ratio against L1 capacity"), "{}", &svg[..200]);
    }
}
