package org.transferqueue.server.bench;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.Locale;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Draws a report as a grouped bar chart in a PNG file: one group per size, one bar per backend and
 * mode showing the mean round-trip GB/s, and a grey bar for each mode's baseline. Runs on headless
 * AWT (it sets {@code java.awt.headless=true} before drawing). Stateless.
 */
public final class ChartReporter {
  /** Width of the image in pixels. */
  public static final int WIDTH = 1200;

  /** Height of the image in pixels. */
  public static final int HEIGHT = 700;

  /** The start of the series name of every baseline's bars. */
  public static final String BASELINE_PREFIX = "baseline";

  private ChartReporter() {}

  /**
   * The values drawn: rows are the series (each backend/mode, then the baseline), columns the
   * sizes.
   *
   * @param report the report
   * @return the dataset
   */
  public static DefaultCategoryDataset dataset(BenchReport report) {
    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    for (SizeResult size : report.sizes()) {
      String column = columnLabel(size);
      for (CaseResult c : size.cases()) {
        dataset.addValue(c.mean(IterationResult::totalGbPerSec), c.label(), column);
      }
    }
    for (SizeResult size : report.sizes()) {
      size.baselines()
          .forEach(
              (mode, baseline) ->
                  dataset.addValue(baseline.gbPerSec(), baselineSeries(mode), columnLabel(size)));
    }
    return dataset;
  }

  /**
   * The series name of a mode's baseline bars.
   *
   * @param mode the mode
   * @return e.g. {@code baseline (embedded): memory copy}
   */
  public static String baselineSeries(BenchMode mode) {
    return BASELINE_PREFIX
        + " ("
        + mode.optionName()
        + ")"
        + switch (mode) {
          case EMBEDDED, SHM -> ": memory copy";
          case LOOPBACK -> ": raw loopback socket";
        };
  }

  private static String columnLabel(SizeResult size) {
    return size.size().label() + ", " + MemoryCheck.gib(size.bytes());
  }

  /**
   * Draws the chart and writes it as a PNG of {@link #WIDTH} x {@link #HEIGHT} pixels.
   *
   * @param report the report
   * @param file the target, replaced
   * @throws UncheckedIOException when the file cannot be written
   */
  public static void write(BenchReport report, Path file) {
    System.setProperty("java.awt.headless", "true");
    JFreeChart chart =
        ChartFactory.createBarChart(
            "tq bench: round-trip throughput (put + get of one batch)",
            "data size (batch x fields x seq-len)",
            "GB/s (10^9 bytes per second)",
            dataset(report),
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    BenchEnvironment env = report.environment();
    chart.addSubtitle(
        new TextTitle(
            String.format(
                Locale.ROOT,
                "%d iterations, %s data; JDK %s, %s %s, %d cores",
                report.plan().iterations(),
                report.plan().complex() ? "complex" : "simple",
                env.jdk(),
                env.os(),
                env.arch(),
                env.cores()),
            new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    chart.setBackgroundPaint(Color.WHITE);
    LegendTitle legend = chart.getLegend();
    legend.setPosition(RectangleEdge.TOP);
    legend.setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(new Color(0xCCCCCC));
    plot.getDomainAxis().setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    plot.getDomainAxis().setMaximumCategoryLabelLines(2);
    plot.getRangeAxis().setUpperMargin(0.15);
    BarRenderer renderer = (BarRenderer) plot.getRenderer();
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    renderer.setItemMargin(0.05);
    renderer.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator("{2}", new DecimalFormat("0.00")));
    renderer.setDefaultItemLabelsVisible(true);
    renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    Color[] palette = {
      new Color(0x66C2A5), new Color(0xFC8D62), new Color(0x8DA0CB), new Color(0xE78AC3)
    };
    int series = plot.getDataset().getRowCount();
    for (int i = 0; i < series; i++) {
      boolean baseline = plot.getDataset().getRowKey(i).toString().startsWith(BASELINE_PREFIX);
      renderer.setSeriesPaint(i, baseline ? new Color(0xB3B3B3) : palette[i % palette.length]);
    }
    try {
      ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
