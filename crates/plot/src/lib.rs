//! # lemma-plot: lemma-eval's pictures
//!
//! Precision-recall curves as one standalone SVG document ([`pr_curves_svg`]): recall across,
//! precision up, both from 0 to 1; each series a coloured line with its points marked, named in
//! a legend; labelled axes. The default size, 640 × 480, reads at 600 px wide. Text is SVG
//! `<text>` in the viewer's sans-serif font: nothing is read from font files and no system library
//! is linked, so the picture is the same on every machine that draws it.
//!
//! ```
//! let points = [(0.0, 1.0), (0.5, 0.6), (1.0, 0.4)];
//! let svg = lemma_plot::pr_curves_svg(
//!     "PR curve",
//!     &[lemma_plot::Series { name: "run.txt", points: &points }],
//!     lemma_plot::SIZE,
//! )?;
//! assert!(svg.starts_with("<svg") && svg.contains("run.txt"));
//! # Ok::<(), String>(())
//! ```

use plotters::prelude::*;

/// The default picture size, in pixels.
pub const SIZE: (u32, u32) = (640, 480);

/// Series of more points than this are drawn as lines without point markers.
pub const MAX_MARKERS: usize = 100;

/// One curve: its name in the legend and its (recall, precision) points, in order.
#[derive(Clone, Copy, Debug)]
pub struct Series<'a> {
    /// The legend's label.
    pub name: &'a str,
    /// (recall, precision) pairs, joined in this order.
    pub points: &'a [(f64, f64)],
}

/// Line colours, told apart in print and by most colour-blind readers (Tableau 10).
const COLOURS: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The colour of the `i`-th series (cycling through ten).
pub fn colour(i: usize) -> (u8, u8, u8) {
    let c = COLOURS[i % COLOURS.len()];
    (c.0, c.1, c.2)
}

/// Draws `series` as precision-recall curves on one chart titled `title`, `size` pixels: an SVG
/// document. Each point is marked when a series has at most [`MAX_MARKERS`] points.
pub fn pr_curves_svg(
    title: &str,
    series: &[Series<'_>],
    size: (u32, u32),
) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, title, series, size).map_err(|e| format!("cannot draw the plot: {e}"))?;
    Ok(svg)
}

/// An error as text (plotters' errors borrow the backend).
fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn draw(
    svg: &mut String,
    title: &str,
    series: &[Series<'_>],
    size: (u32, u32),
) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE).map_err(text)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..1f64, 0f64..1.02f64)
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_labels(11)
        .y_labels(11)
        .x_desc("recall")
        .y_desc("precision")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(text)?;
    for (i, s) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(text)?
            .label(s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3)));
        if s.points.len() <= MAX_MARKERS {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(text)?;
        }
    }
    if !series.is_empty() {
        // The legend goes to the corner, lower-left or upper-right, that covers fewer points.
        let within = |x0: f64, x1: f64, y0: f64, y1: f64| {
            (series.iter().flat_map(|s| s.points.iter()))
                .filter(|p| (x0..=x1).contains(&p.0) && (y0..=y1).contains(&p.1))
                .count()
        };
        let corner = if within(0.0, 0.4, 0.0, 0.3) <= within(0.6, 1.0, 0.7, 1.02) {
            SeriesLabelPosition::LowerLeft
        } else {
            SeriesLabelPosition::UpperRight
        };
        legend(&mut chart, corner)?;
    }
    root.present().map_err(text)?;
    Ok(())
}

/// Draws the series' names in a box at `corner`.
fn legend<'a, 'b: 'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    corner: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(text)
}

/// Keeps the points of a long curve that a chart can tell apart: a point is kept when it lies a
/// thousandth of the chart or more from the last point kept, and the last point always is.
#[derive(Clone, Debug, Default)]
pub struct Thin {
    kept: Vec<(f64, f64)>,
    pending: Option<(f64, f64)>,
}

impl Thin {
    /// The next point of the curve.
    pub fn push(&mut self, p: (f64, f64)) {
        match self.kept.last() {
            Some(l) if (p.0 - l.0).abs() < 1e-3 && (p.1 - l.1).abs() < 1e-3 => {
                self.pending = Some(p)
            }
            _ => {
                self.kept.push(p);
                self.pending = None;
            }
        }
    }

    /// The points kept.
    pub fn finish(mut self) -> Vec<(f64, f64)> {
        self.kept.extend(self.pending);
        self.kept
    }
}

/// One histogram: its name in the legend and its count per bin.
#[derive(Clone, Copy, Debug)]
pub struct Bars<'a> {
    /// The legend's label.
    pub name: &'a str,
    /// A count per bin, in the bins' order.
    pub counts: &'a [u64],
}

/// Draws histograms over the same bins side by side (each bin a group of bars, one per series, in
/// the series' colours), titled `title`: `labels` names each bin (under its middle), `x_desc` the
/// axis; goals counted upwards. An SVG document.
pub fn histograms_svg(
    title: &str,
    x_desc: &str,
    labels: &[String],
    series: &[Bars<'_>],
    size: (u32, u32),
) -> Result<String, String> {
    let mut svg = String::new();
    draw_bars(&mut svg, title, x_desc, labels, series, size)
        .map_err(|e| format!("cannot draw the plot: {e}"))?;
    Ok(svg)
}

fn draw_bars(
    svg: &mut String,
    title: &str,
    x_desc: &str,
    labels: &[String],
    series: &[Bars<'_>],
    size: (u32, u32),
) -> Result<(), String> {
    let bins = labels.len().max(1);
    let top = (series.iter())
        .flat_map(|s| s.counts.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE).map_err(text)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..bins as f64, 0f64..top * 1.08)
        .map_err(text)?;
    // Ticks every half bin: the middles are labelled.
    let label = |x: &f64| {
        let i = x.floor();
        match labels.get(i as usize) {
            Some(l) if (x - i - 0.5).abs() < 1e-9 => l.clone(),
            _ => String::new(),
        }
    };
    chart
        .configure_mesh()
        .x_labels(2 * bins + 1)
        .x_label_formatter(&label)
        .y_labels(8)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc(x_desc)
        .y_desc("goals")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(WHITE.mix(0.0))
        .disable_x_mesh()
        .draw()
        .map_err(text)?;
    let m = series.len().max(1) as f64;
    for (j, s) in series.iter().enumerate() {
        let c = COLOURS[j % COLOURS.len()];
        let w = 0.8 / m;
        chart
            .draw_series(s.counts.iter().enumerate().map(|(i, &n)| {
                let x0 = i as f64 + 0.1 + j as f64 * w;
                Rectangle::new([(x0, 0.0), (x0 + w, n as f64)], c.filled())
            }))
            .map_err(text)?
            .label(s.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
    }
    if !series.is_empty() {
        // The legend goes above the lower half of the bins.
        let half = |r: std::ops::Range<usize>| -> u64 {
            (series.iter())
                .flat_map(|s| s.counts.get(r.clone()).unwrap_or(&[]).iter().copied())
                .max()
                .unwrap_or(0)
        };
        let corner = if half(bins / 2..bins) <= half(0..bins / 2) {
            SeriesLabelPosition::UpperRight
        } else {
            SeriesLabelPosition::UpperLeft
        };
        legend(&mut chart, corner)?;
    }
    root.present().map_err(text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document parses as XML; the axes are labelled; each series has one marker per point,
    /// in its colour, placed by one linear map of (recall, precision) to pixels for every point
    /// of every series (recall rightwards, precision upwards).
    #[test]
    fn the_svg_parses_and_holds_every_point() {
        let a = [(0.0, 1.0), (0.25, 0.8), (0.5, 2.0 / 3.0), (1.0, 0.5)];
        let b = [(0.0, 0.6), (0.5, 0.6), (1.0, 0.1)];
        let series = [
            Series {
                name: "run A",
                points: &a,
            },
            Series {
                name: "run <B> & co",
                points: &b,
            },
        ];
        let svg = pr_curves_svg("two runs", &series, SIZE).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("width"), Some("640"));
        let texts: Vec<&str> = (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        for want in [
            "recall",
            "precision",
            "two runs",
            "run A",
            "run <B> & co",
            "0.5",
        ] {
            assert!(texts.contains(&want), "no text `{want}` in {texts:?}");
        }
        // Markers: circles of radius 3, grouped by fill colour.
        let mut markers: Vec<(String, f64, f64)> = Vec::new();
        for n in doc.descendants().filter(|n| n.has_tag_name("circle")) {
            let f = |k| n.attribute(k).unwrap().parse::<f64>().unwrap();
            markers.push((
                n.attribute("fill").unwrap().to_lowercase(),
                f("cx"),
                f("cy"),
            ));
        }
        assert_eq!(markers.len(), a.len() + b.len());
        let hex = |(r, g, b): (u8, u8, u8)| format!("#{r:02x}{g:02x}{b:02x}");
        let (x0, y0) = (markers[0].1, markers[0].2); // (0, 1)
        let (x1, y1) = (markers[3].1, markers[3].2); // (1, 0.5)
        assert!(
            x1 > x0 + 400.0 && y1 > y0 + 150.0,
            "recall rightwards, precision upwards"
        );
        let px = |(r, p): (f64, f64)| (x0 + r * (x1 - x0), y0 + (1.0 - p) * (y1 - y0) / 0.5);
        for (i, (s, points)) in [(0, &a[..]), (1, &b[..])].into_iter().enumerate() {
            let mine: Vec<_> = markers.iter().filter(|m| m.0 == hex(colour(s))).collect();
            assert_eq!(mine.len(), points.len(), "series {i}");
            for (m, &p) in mine.iter().zip(points) {
                let (x, y) = px(p);
                assert!(
                    (m.1 - x).abs() <= 1.0 && (m.2 - y).abs() <= 1.0,
                    "{p:?} at {m:?}"
                );
            }
        }
        // Each series' line joins its points in its colour.
        for (s, points) in [(0, &a[..]), (1, &b[..])] {
            let joined = doc.descendants().any(|n| {
                n.has_tag_name("polyline")
                    && n.attribute("stroke").map(str::to_lowercase) == Some(hex(colour(s)))
                    && n.attribute("points").unwrap().split_whitespace().count() == points.len()
            });
            assert!(joined, "no line of series {s}");
        }
    }

    /// Histograms: one bar per bin and series, heights in proportion to the counts, the edges
    /// labelled, the series named.
    #[test]
    fn histograms_have_a_bar_per_bin_and_series() {
        let labels: Vec<String> = ["low", "high"].iter().map(|s| s.to_string()).collect();
        let (a, b) = ([4, 2], [0, 8]);
        let series = [
            Bars {
                name: "A",
                counts: &a,
            },
            Bars {
                name: "B",
                counts: &b,
            },
        ];
        let svg = histograms_svg("AP", "AP", &labels, &series, SIZE).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let texts: Vec<&str> = (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        for want in ["low", "high", "A", "B", "goals"] {
            assert!(texts.contains(&want), "no text `{want}` in {texts:?}");
        }
        let hex = |(r, g, b): (u8, u8, u8)| format!("#{r:02x}{g:02x}{b:02x}");
        let heights = |s: usize| -> Vec<f64> {
            (doc.descendants())
                .filter(|n| n.has_tag_name("rect"))
                .filter(|n| n.attribute("fill").map(str::to_lowercase) == Some(hex(colour(s))))
                .map(|n| n.attribute("height").unwrap().parse::<f64>().unwrap())
                .collect()
        };
        // Each series: its bars and its legend's swatch (10 px high).
        let (ha, hb) = (heights(0), heights(1));
        assert_eq!((ha.len(), hb.len()), (3, 3), "{ha:?} {hb:?}");
        let unit = hb[1] / 8.0;
        assert!((ha[0] - 4.0 * unit).abs() <= 1.0 && (ha[1] - 2.0 * unit).abs() <= 1.0);
        assert!(hb[0] <= 1.0);
    }
}
