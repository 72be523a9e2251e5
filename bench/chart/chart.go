package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series are the four bars of a case in the core panels, top to bottom,
// as the legend names them.
var Series = [4]string{"cudago", "C (same run)", "cuda.core", "CuPy"}

var colors = [4]color.Color{
	color.RGBA{0x00, 0x7d, 0x9c, 0xff}, // Go's blue, darkened for contrast
	color.RGBA{0x80, 0x80, 0x80, 0xff},
	color.RGBA{0x76, 0xb9, 0x00, 0xff}, // NVIDIA's green
	color.RGBA{0xe0, 0x6c, 0x1a, 0xff},
}

// libColors are those of LibSeries: cudago and CuPy as in the core
// panels.
var libColors = [3]color.Color{colors[0], colors[3], color.RGBA{0x8e, 0x5e, 0xa2, 0xff}}

// Sizes, in points: 600 pt is 800 CSS pixels, README width.
const (
	width   = 600
	margin  = 10
	barH    = 10 // height of one bar of a case and its share of the gap
	panelH  = 62 // a panel's title, axis and padding
	legendH = 22
	gap     = 12 // between panels
	// sectionGap is between the core section's caption and the math
	// libraries' title.
	sectionGap = 14
	// A browser without Liberation Sans or Arial (same metrics) lays the
	// text out in a wider face: wrap the caption with room to spare.
	captionW = (width - 2*margin) * 0.88
)

var (
	sans   = font.Font{Typeface: "Liberation", Variant: "Sans"}
	italic = font.Font{Typeface: "Liberation", Variant: "Sans", Style: xfont.StyleItalic}
	grey   = color.Gray{0x55}
)

func style(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Font: font.From(f, size), Color: c, Handler: plot.DefaultTextHandler}
}

// bar is one case's figure of one series; ok is false where the series
// has none.
type bar struct {
	v  float64
	ok bool
}

type panel struct {
	title, xlabel string
	names         []string
	bars          [][]bar // per case, one per series
	colors        []color.Color
	label         func(float64) string // of the value labels
}

// height is the panel's height on the canvas.
func (p *panel) height() vg.Length {
	return vg.Length(len(p.names)*len(p.colors)*barH + panelH)
}

// section is a titled part of the chart: a legend of its series, its
// panels and its caption.
type section struct {
	title   string
	legend  []string
	panels  []*panel
	caption []string
}

// SVG draws the chart of r, with cuda.core's and CuPy's figures from py
// (nil: none): a panel of the timed cases in µs per operation (lower is
// better) and one of the copies in GB/s (higher is better), the legend,
// and the runs' header lines as the caption. With libs (nil: none) a
// second section follows, the math libraries against CuPy and PyTorch:
// a panel per LibCase.Panel, its own legend and caption. The same input
// gives the same bytes.
func SVG(r *Report, py *Python, libs *LibReport) ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	if py != nil {
		if err := py.Check(); err != nil {
			return nil, fmt.Errorf("chart: python figures: %w", err)
		}
	}
	if libs != nil {
		if err := libs.Check(); err != nil {
			return nil, fmt.Errorf("chart: library figures: %w", err)
		}
	}
	capStyle := style(sans, 7.5, grey)
	core, err := coreSection(r, py, capStyle)
	if err != nil {
		return nil, err
	}
	sections := []*section{core}
	if libs != nil {
		sections = append(sections, libSection(libs, capStyle))
	}
	lineH := capStyle.Height("Ag") + 1.5

	titleStyle := style(sans, 13, color.Black)
	titleStyle.XAlign, titleStyle.YAlign = draw.XCenter, draw.YTop
	height := vg.Length(margin)
	for i, sc := range sections {
		if i > 0 {
			height += sectionGap
		}
		height += titleStyle.Height("Ag") + 4 + legendH
		for _, p := range sc.panels {
			height += p.height() + gap
		}
		height += vg.Length(len(sc.caption)) * lineH
	}
	height += margin

	var panels []*panel
	for _, sc := range sections {
		panels = append(panels, sc.panels...)
	}
	plots := make([]*plot.Plot, len(panels))
	barSets := make([][]*plotter.BarChart, len(panels))
	labelSets := make([][]*plotter.Labels, len(panels))
	for i, p := range panels {
		var err error
		if plots[i], barSets[i], labelSets[i], err = p.plot(); err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
	}
	alignY(plots, panels)

	cv := vgsvg.New(width, height)
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top := dc.Max.Y - margin
	i := 0 // panels' index
	for j, sc := range sections {
		if j > 0 {
			top -= sectionGap
		}
		dc.FillText(titleStyle, vg.Point{X: dc.Center().X, Y: top}, sc.title)
		top -= titleStyle.Height("Ag") + 4

		legendArea := area(dc, top-legendH, top)
		tiles := draw.Tiles{Cols: 4, Rows: 1, PadLeft: 60, PadRight: 20}
		for k, name := range sc.legend {
			l := plot.NewLegend()
			l.TextStyle = style(sans, 10, color.Black)
			l.Top, l.Left = true, true
			l.ThumbnailWidth = 14
			l.Add(name, barSets[i][k])
			l.Draw(tiles.At(legendArea, k, 0))
		}
		top -= legendH

		for _, p := range sc.panels {
			h := p.height()
			a := area(dc, top-h, top)
			top -= h + gap
			data := plots[i].DataCanvas(a)
			unit := (data.Max.Y - data.Min.Y) / vg.Length(len(p.names))
			n := len(p.colors)
			w := unit * 0.8 / vg.Length(n)
			for k := range n {
				dy := w * vg.Length(float64(n-1)/2-float64(k)) // the first series on top
				barSets[i][k].Width, barSets[i][k].Offset = w, dy
				labelSets[i][k].Offset.Y = dy
			}
			plots[i].Draw(a)
			i++
		}

		for _, line := range sc.caption {
			top -= lineH
			dc.FillText(capStyle, vg.Point{X: margin, Y: top}, line)
		}
	}

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	// The SVG names the font whose metrics laid the text out; Arial has
	// the same metrics, and a generic family keeps a browser without
	// either from falling back to a serif face.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}

// coreSection is the section of r's cases, with py's figures.
func coreSection(r *Report, py *Python, capStyle text.Style) (*section, error) {
	times := panel{title: "Time per operation, µs: lower is better", xlabel: "µs per operation (lower is better)",
		colors: colors[:], label: fixed(2)}
	copies := panel{title: "Copies, GB/s: higher is better", xlabel: "GB/s (higher is better)",
		colors: colors[:], label: fixed(1)}
	var off []string
	missing := false
	for _, c := range r.Cases {
		if c.OffChart {
			off = append(off, c.Name)
			continue
		}
		p := &times
		if c.Copy() {
			p = &copies
		}
		b := make([]bar, len(Series))
		if c.Error == "" {
			b[0], b[1] = bar{c.GoNs / 1e3, true}, bar{c.CNs / 1e3, true}
			if c.Copy() {
				b[0].v, b[1].v = float64(c.Bytes)/c.GoNs, float64(c.Bytes)/c.CNs
			}
		}
		for i, lib := range Libraries {
			f, ok := figure(py, lib, c.Name)
			if !ok {
				continue
			}
			v := f.US
			if c.Copy() {
				v = f.GBps
			}
			if v == 0 {
				return nil, fmt.Errorf("chart: %s's figure for %s is in the wrong unit (us %v, gbps %v)", lib, c.Name, f.US, f.GBps)
			}
			b[2+i] = bar{v, true}
		}
		for _, x := range b {
			missing = missing || !x.ok
		}
		p.names = append(p.names, c.Name)
		p.bars = append(p.bars, b)
	}
	if size := copySize(r); size != "" {
		copies.title = "Copies of " + size + ", GB/s: higher is better"
	}
	sc := &section{title: "cudago against C (same run), cuda.core and CuPy", legend: Series[:]}
	for _, p := range []*panel{&times, &copies} {
		if len(p.names) > 0 {
			sc.panels = append(sc.panels, p)
		}
	}
	if len(sc.panels) == 0 {
		return nil, errors.New("chart: every case is off the chart")
	}

	for _, s := range []string{r.Line, pyLine(py), r.Note} {
		if s != "" {
			sc.caption = append(sc.caption, wrap(s, capStyle, captionW)...)
		}
	}
	switch {
	case py == nil:
		sc.caption = append(sc.caption, "n/a: no figures of cuda.core and CuPy were given (cudagobench -python).")
	case missing:
		sc.caption = append(sc.caption, "n/a: the library has no such case here (or the run failed it).")
	}
	if len(off) > 0 {
		sc.caption = append(sc.caption, wrap("Not drawn, their scale would flatten the others (see the table): "+strings.Join(off, ", ")+".", capStyle, captionW)...)
	}
	return sc, nil
}

// libSection is the section of l, which Check passed: a panel per
// LibCase.Panel, in the order of their first cases.
func libSection(l *LibReport, capStyle text.Style) *section {
	sc := &section{title: "Math libraries against CuPy and PyTorch", legend: LibSeries[:]}
	byName := map[string]*panel{}
	var whats []string
	missing := false
	for _, c := range l.Cases {
		p := byName[c.Panel]
		if p == nil {
			dir := better(c.Higher)
			p = &panel{title: c.Panel + ", " + c.Unit + ": " + dir, xlabel: c.Unit + " (" + dir + ")",
				colors: libColors[:], label: fourDigits}
			byName[c.Panel] = p
			sc.panels = append(sc.panels, p)
		}
		b := make([]bar, len(LibSeries))
		for k, lib := range LibSeries {
			v, ok := c.Figures[lib]
			b[k] = bar{v, ok}
			missing = missing || !ok
		}
		p.names = append(p.names, c.Name)
		p.bars = append(p.bars, b)
		if c.What != "" {
			whats = append(whats, c.Name+" against "+c.What)
		}
	}
	for _, s := range []string{l.Line, l.Note} {
		if s != "" {
			sc.caption = append(sc.caption, wrap(s, capStyle, captionW)...)
		}
	}
	if len(whats) > 0 {
		sc.caption = append(sc.caption, wrap(strings.Join(whats, "; ")+".", capStyle, captionW)...)
	}
	if missing {
		sc.caption = append(sc.caption, "n/a: the library has no such case here (or the run failed it).")
	}
	return sc
}

// fixed labels a value with d decimals.
func fixed(d int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', d, 64) }
}

// fourDigits labels a value with four significant digits (868.6, 1612,
// 51.66, 0.2770): the library figures span four orders of magnitude.
func fourDigits(v float64) string {
	return strconv.FormatFloat(v, 'f', max(0, 3-int(math.Floor(math.Log10(v)))), 64)
}

// figure returns lib's figure for the case, if it has one.
func figure(py *Python, lib, name string) (Figure, bool) {
	if py == nil {
		return Figure{}, false
	}
	f, ok := py.Results[lib][name]
	return f, ok && f.Error == ""
}

func pyLine(py *Python) string {
	if py == nil {
		return ""
	}
	return py.Line
}

// copySize names the size of the copy cases, when they share one.
func copySize(r *Report) string {
	var size int64
	for _, c := range r.Cases {
		if !c.Copy() || c.OffChart {
			continue
		}
		if size != 0 && c.Bytes != size {
			return ""
		}
		size = c.Bytes
	}
	switch {
	case size == 0:
		return ""
	case size%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", size>>20)
	case size%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", size>>10)
	}
	return fmt.Sprintf("%d B", size)
}

// plot makes the panel's plot: grouped horizontal bars, the first case at
// the top, each bar labelled with its value or "n/a". The bars' width and
// offsets are set once the data area is known (SVG).
func (p *panel) plot() (*plot.Plot, []*plotter.BarChart, []*plotter.Labels, error) {
	bars := make([]*plotter.BarChart, len(p.colors))
	labels := make([]*plotter.Labels, len(p.colors))
	pl := plot.New()
	pl.Title.Text = p.title
	pl.Title.TextStyle = style(sans, 11, color.Black)
	pl.Title.TextStyle.XAlign, pl.Title.TextStyle.YAlign = draw.XCenter, draw.YTop
	pl.Title.Padding = 4
	pl.X.Label.Text = p.xlabel
	pl.X.Label.TextStyle = style(sans, 9, grey)
	pl.X.Label.TextStyle.XAlign, pl.X.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
	pl.X.Tick.Label = style(sans, 8.5, color.Black)
	pl.X.Tick.Label.XAlign, pl.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	pl.Y.Tick.Label = style(sans, 9.5, color.Black)
	pl.Y.Tick.Label.XAlign, pl.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter

	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{0xdd}
	pl.Add(grid)

	n := len(p.names)
	vmax := 0.0
	for _, b := range p.bars {
		for _, x := range b {
			if x.ok {
				vmax = math.Max(vmax, x.v)
			}
		}
	}
	valueStyle := style(sans, 7, color.Black)
	valueStyle.XAlign, valueStyle.YAlign = draw.XLeft, draw.YCenter
	naStyle := style(italic, 7, grey)
	naStyle.XAlign, naStyle.YAlign = draw.XLeft, draw.YCenter
	for k := range p.colors {
		vals := make(plotter.Values, n)
		var xyl plotter.XYLabels
		var styles []text.Style
		for i, b := range p.bars {
			y := float64(n - 1 - i) // the first case on top
			if b[k].ok {
				vals[n-1-i] = b[k].v
				xyl.XYs = append(xyl.XYs, plotter.XY{X: b[k].v, Y: y})
				xyl.Labels = append(xyl.Labels, p.label(b[k].v))
				styles = append(styles, valueStyle)
			} else {
				xyl.XYs = append(xyl.XYs, plotter.XY{X: 0, Y: y})
				xyl.Labels = append(xyl.Labels, "n/a")
				styles = append(styles, naStyle)
			}
		}
		bc, err := plotter.NewBarChart(vals, 1) // width set in SVG
		if err != nil {
			return nil, bars, labels, err
		}
		bc.Horizontal = true
		bc.Color = p.colors[k]
		bc.LineStyle.Width = 0
		lb, err := plotter.NewLabels(xyl)
		if err != nil {
			return nil, bars, labels, err
		}
		lb.TextStyle = styles
		lb.Offset.X = 2
		pl.Add(bc, lb)
		bars[k], labels[k] = bc, lb
	}
	pl.NominalY(reversed(p.names)...)
	pl.X.Min, pl.X.Max = 0, vmax*1.14 // room for the value labels
	pl.Y.Min, pl.Y.Max = -0.5, float64(n)-0.5
	pl.X.Padding, pl.Y.Padding = 0, 8
	return pl, bars, labels, nil
}

// alignY widens the narrower panels' case-name columns to the widest, so
// that the panels' bars start at the same x.
func alignY(plots []*plot.Plot, panels []*panel) {
	widths := make([]vg.Length, len(plots))
	var most vg.Length
	for i, p := range panels {
		for _, n := range p.names {
			widths[i] = max(widths[i], plots[i].Y.Tick.Label.Width(n))
		}
		most = max(most, widths[i])
	}
	for i, pl := range plots {
		pl.Y.Padding += most - widths[i]
	}
}

func reversed(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// area is the full-width band of dc between y0 and y1, inside the margins.
func area(dc draw.Canvas, y0, y1 vg.Length) draw.Canvas {
	return draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Min.X + margin, Y: y0},
		Max: vg.Point{X: dc.Max.X - margin, Y: y1},
	}}
}

// wrap breaks s into lines no wider than w in style st.
func wrap(s string, st text.Style, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && st.Width(try) > w {
			lines = append(lines, line)
			try = word
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
