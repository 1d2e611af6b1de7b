//! The training curve: loss by step and held-out accuracy by epoch, drawn
//! as a PNG with plotters.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// Where Debian's fonts-dejavu-core (installed by ci/setup) puts its font.
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// The measured points.
#[derive(Default)]
pub struct Curve {
    /// (step, mean training loss over the last steps).
    pub loss: Vec<(usize, f64)>,
    /// (step, held-out accuracy).
    pub accuracy: Vec<(usize, f64)>,
}

/// Registers the font for labels; false (labels left out) when it is absent.
fn register_font() -> bool {
    match std::fs::read(FONT) {
        Ok(bytes) => {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
        }
        Err(_) => false,
    }
}

/// Draws the loss (left) and accuracy (right) panels into `path`.
pub fn draw(curve: &Curve, path: &Path) -> Result<()> {
    let labels = register_font();
    if !labels {
        eprintln!("note: {FONT} not found (fonts-dejavu-core); the curve is drawn without labels");
    }
    let root = BitMapBackend::new(path, (1000, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let (left, right) = root.split_horizontally(500);
    let last_step = curve
        .loss
        .iter()
        .chain(&curve.accuracy)
        .map(|p| p.0)
        .max()
        .unwrap_or(1)
        .max(1);
    let max_loss = curve.loss.iter().map(|p| p.1).fold(0.1, f64::max);
    panel(
        &left,
        labels,
        "training loss",
        (0.0, max_loss * 1.05),
        last_step,
        &curve.loss,
        &RED,
    )?;
    let low = curve.accuracy.iter().map(|p| p.1).fold(1.0, f64::min);
    panel(
        &right,
        labels,
        "held-out accuracy",
        ((low - 0.02).max(0.0), 1.0),
        last_step,
        &curve.accuracy,
        &BLUE,
    )?;
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

fn panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    labels: bool,
    title: &str,
    range: (f64, f64),
    last_step: usize,
    points: &[(usize, f64)],
    color: &RGBColor,
) -> Result<()> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(50);
    if labels {
        builder.caption(title, ("sans-serif", 20));
    }
    let mut chart = builder
        .build_cartesian_2d(0usize..last_step, range.0..range.1)
        .map_err(|e| anyhow!("{e}"))?;
    let mut mesh = chart.configure_mesh();
    if labels {
        mesh.x_desc("step");
    } else {
        mesh.disable_x_mesh()
            .disable_y_mesh()
            .x_labels(0)
            .y_labels(0);
    }
    mesh.draw().map_err(|e| anyhow!("{e}"))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().copied(),
            color.stroke_width(2),
        ))
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
        .map_err(|e| anyhow!("{e}"))?;
    Ok(())
}
