package main

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// findChromium returns the path of a headless-capable Chromium, or skips the
// test with the reason; when CHROMIUM_REQUIRED=1 or CI=true (as in .ci/run) its
// absence fails the test instead.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CHROMIUM_REQUIRED") == "1" || os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH, and CHROMIUM_REQUIRED=1 or CI=true: install it (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH to render the report (apt-get install -y chromium); set CHROMIUM_REQUIRED=1 to make this a failure")
	return ""
}

// renderPNG has headless Chromium open the file and screenshot it.
func renderPNG(t *testing.T, chromium, htmlPath string) image.Image {
	t.Helper()
	profile, err := os.MkdirTemp("", "simulate-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	shot := filepath.Join(t.TempDir(), "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--screenshot="+shot, "--window-size=1100,900", "file://"+htmlPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	return img
}

// colorArea is where a colour appears in an image: how many pixels, and their
// bounding box.
type colorArea struct {
	pixels int
	box    image.Rectangle
}

// findColor counts the pixels within a small distance of hex ("#rrggbb").
func findColor(img image.Image, hex string) colorArea {
	want := [3]int{}
	for i := range want {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		want[i] = int(v)
	}
	var area colorArea
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(int(r>>8), want[0]) && near(int(g>>8), want[1]) && near(int(bl>>8), want[2]) {
				p := image.Rect(x, y, x+1, y+1)
				if area.pixels == 0 {
					area.box = p
				} else {
					area.box = area.box.Union(p)
				}
				area.pixels++
			}
		}
	}
	return area
}

func near(a, b int) bool { return a-b <= 6 && b-a <= 6 }

// The report renders in a real browser: the chart's bars of both series fill a
// wide area of the screenshot. The same check on a replay that refuses nothing
// finds no refused bars, so it tells a chart from its absence.
func TestReportRendersInHeadlessChromium(t *testing.T) {
	chromium := findChromium(t)
	img := renderPNG(t, chromium, writeSampleReport(t))
	admitted, refused := findColor(img, admittedColor), findColor(img, refusedColor)
	t.Logf("admitted: %d pixels in %v; refused: %d pixels in %v", admitted.pixels, admitted.box, refused.pixels, refused.box)
	// The legend's swatches and the coloured counts take a few hundred pixels;
	// the bars take thousands, spread across the plot.
	if admitted.pixels < 5000 || admitted.box.Dx() < plotWidth*3/4 || admitted.box.Dy() < 100 {
		t.Errorf("the admitted series is missing from the rendered chart: %d pixels in %v", admitted.pixels, admitted.box)
	}
	if refused.pixels < 3000 || refused.box.Dx() < plotWidth/3 || refused.box.Dy() < 100 {
		t.Errorf("the refused series is missing from the rendered chart: %d pixels in %v", refused.pixels, refused.box)
	}

	lenient := renderPNG(t, chromium, writeSampleReport(t, "-algorithm", "sliding_window", "-limit", "1000", "-period", "1m"))
	if none := findColor(lenient, refusedColor); none.pixels >= 3000 {
		t.Errorf("a replay without refusals shows %d refused pixels: the check cannot tell", none.pixels)
	}
}
