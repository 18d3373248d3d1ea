package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

//go:embed report.html.tmpl
var reportTemplateText string

// The colours of the chart's series; the browser test looks for them.
const (
	admittedColor = "#2f6fdb"
	refusedColor  = "#e0452b"
)

// Geometry of the chart, in SVG user units (CSS pixels at 100% zoom).
const (
	chartWidth   = 1000
	chartHeight  = 320
	chartLeft    = 64 // room for the y labels
	chartRight   = 16
	chartTop     = 16
	chartBottom  = 40 // room for the x labels
	plotWidth    = chartWidth - chartLeft - chartRight
	plotHeight   = chartHeight - chartTop - chartBottom
	maxTimeTicks = 8
)

// reportPage is what the report's template shows.
type reportPage struct {
	Policy, Key, Format, Span, Interval string
	Requests, Admitted, Refused         string // digits grouped: 1,234,567
	AdmittedShare, RefusedShare         string
	Keys                                string
	BadLines, LateLines                 int64
	AdmittedColor, RefusedColor         string
	Chart                               chart
	TopKeys                             []reportKey
}

type reportKey struct {
	Key               string
	Requests, Refused string
	Share             string
}

// chart is the stacked bar chart of admitted and refused requests per interval.
type chart struct {
	Width, Height, Left, Top, PlotWidth, PlotHeight, Bottom int
	Bars                                                    []chartBar
	YTicks                                                  []chartTick
	XTicks                                                  []chartTick
}

// chartBar is one interval: its admitted part at the bottom, refused on top.
type chartBar struct {
	X, Width                  float64
	AdmittedY, AdmittedHeight float64
	RefusedY, RefusedHeight   float64
	Title                     string
}

type chartTick struct {
	Position float64
	Label    string
}

var reportTemplate = template.Must(template.New("report").Parse(reportTemplateText))

// reportFile is where the HTML report goes: a temporary file beside path, made
// before the replay so that a path that cannot be written fails at once rather than
// after a long log, and renamed to path once written, so that a replay that fails
// leaves an earlier report at path as it was.
type reportFile struct {
	path string
	tmp  *os.File
}

func createReportFile(path string) (*reportFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &reportFile{path: path, tmp: tmp}, nil
}

// write writes the HTML report of a replay and puts it at the report's path.
func (f *reportFile) write(t *tally, cfg config) error {
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, newReportPage(t, cfg)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := f.tmp.Write(b.Bytes())
	if err == nil {
		err = f.tmp.Chmod(0o644)
	}
	if closeErr := f.tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// discard removes the temporary file, unless write has renamed it.
func (f *reportFile) discard() {
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

func newReportPage(t *tally, cfg config) reportPage {
	page := reportPage{
		Policy:        t.policy.String(),
		Format:        cfg.format,
		Requests:      grouped(t.requests),
		Admitted:      grouped(t.admitted),
		Refused:       grouped(t.refused()),
		AdmittedShare: percent(t.admitted, t.requests),
		RefusedShare:  percent(t.refused(), t.requests),
		Keys:          grouped(int64(len(t.keys))),
		BadLines:      t.badLines,
		LateLines:     t.lateLines,
		AdmittedColor: admittedColor,
		RefusedColor:  refusedColor,
		Interval:      widthName(intervalWidths[t.intervals.width]),
		Chart:         newChart(&t.intervals),
	}
	if cfg.format != "csv" {
		page.Key = cfg.key.String()
	}
	if t.requests > 0 {
		page.Span = timeSpan(t.firstMs, t.lastMs)
	}
	for _, k := range t.mostRefused(topKeys) {
		page.TopKeys = append(page.TopKeys, reportKey{Key: k.key, Requests: grouped(k.requests), Refused: grouped(k.refused), Share: percent(k.refused, k.requests)})
	}
	return page
}

func newChart(iv *intervals) chart {
	c := chart{Width: chartWidth, Height: chartHeight, Left: chartLeft, Top: chartTop,
		PlotWidth: plotWidth, PlotHeight: plotHeight, Bottom: chartTop + plotHeight}
	n := len(iv.counts)
	if n == 0 {
		return c
	}
	var peak int64
	for _, count := range iv.counts {
		peak = max(peak, count.admitted+count.refused)
	}
	step := niceStep(peak)
	top := max(step, (peak+step-1)/step*step)
	for v := int64(0); v <= top; v += step {
		c.YTicks = append(c.YTicks, chartTick{Position: chartTop + plotHeight - float64(v)/float64(top)*plotHeight, Label: fmt.Sprint(v)})
	}
	slot := float64(plotWidth) / float64(n)
	gap := math.Min(2, slot/5)
	width := iv.widthMs()
	for i, count := range iv.counts {
		admittedHeight := float64(count.admitted) / float64(top) * plotHeight
		refusedHeight := float64(count.refused) / float64(top) * plotHeight
		base := float64(chartTop + plotHeight)
		start := time.UnixMilli(iv.start(i)).UTC()
		c.Bars = append(c.Bars, chartBar{
			X: round2(chartLeft + float64(i)*slot + gap/2), Width: round2(slot - gap),
			AdmittedY: round2(base - admittedHeight), AdmittedHeight: round2(admittedHeight),
			RefusedY: round2(base - admittedHeight - refusedHeight), RefusedHeight: round2(refusedHeight),
			Title: fmt.Sprintf("%s to %s UTC: %s admitted, %s refused", start.Format("2006-01-02 15:04:05"),
				start.Add(time.Duration(width)*time.Millisecond).Format("15:04:05"), grouped(count.admitted), grouped(count.refused)),
		})
	}
	spacing := tickSpacing(iv.widthMs(), int64(n)*iv.widthMs())
	layout := timeLabelLayout(iv, spacing)
	for i := 0; i < n; i++ {
		if start := iv.start(i); start%spacing == 0 {
			c.XTicks = append(c.XTicks, chartTick{Position: round2(chartLeft + float64(i)*slot),
				Label: time.UnixMilli(start).UTC().Format(layout)})
		}
	}
	return c
}

// tickSpacings are the spacings the time axis may label at, in ms.
var tickSpacings = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour, 112 * 24 * time.Hour,
	448 * 24 * time.Hour, 1792 * 24 * time.Hour, 7168 * 24 * time.Hour, 28672 * 24 * time.Hour,
}

// tickSpacing returns the narrowest spacing, a multiple of the interval width,
// that puts at most maxTimeTicks labels on a span: labels fall on round times
// (09:02, 09:04, ...) at the start of an interval.
func tickSpacing(widthMs, spanMs int64) int64 {
	for _, d := range tickSpacings {
		if ms := d.Milliseconds(); ms%widthMs == 0 && spanMs/ms <= maxTimeTicks {
			return ms
		}
	}
	return widthMs * max(1, (spanMs/widthMs+maxTimeTicks-1)/maxTimeTicks)
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that divides 0..peak
// into at most five parts.
func niceStep(peak int64) int64 {
	for magnitude := int64(1); ; magnitude *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if step := m * magnitude; step*5 >= peak || magnitude > math.MaxInt64/100 {
				return step
			}
		}
	}
}

// timeLabelLayout picks how the time axis names times, from the spacing of its
// labels and the span.
func timeLabelLayout(iv *intervals, spacingMs int64) string {
	spacing := time.Duration(spacingMs) * time.Millisecond
	first := time.UnixMilli(iv.start(0)).UTC()
	last := time.UnixMilli(iv.start(len(iv.counts) - 1)).UTC()
	sameDay := first.Format("2006-01-02") == last.Format("2006-01-02")
	switch {
	case spacing >= 24*time.Hour:
		return "2006-01-02"
	case spacing < time.Minute && sameDay:
		return "15:04:05"
	case spacing < time.Minute:
		return "01-02 15:04:05"
	case sameDay:
		return "15:04"
	}
	return "01-02 15:04"
}

// widthName names an interval width for people: "10 s", "5 min", "1 day".
func widthName(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		if d == 24*time.Hour {
			return "1 day"
		}
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

// grouped writes n with its digits in groups of three: 1,234,567.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	start := len(s) % 3
	if start == 0 {
		start = 3
	}
	b := []byte(s[:start])
	for i := start; i < len(s); i += 3 {
		b = append(append(b, ','), s[i:i+3]...)
	}
	return string(b)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
