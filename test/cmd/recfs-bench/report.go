package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Unit is what a row's figures measure and which direction is better.
type Unit struct {
	Name         string // shown after the figure: "MB/s", "s", "records/s", "B/record", "MiB"
	HigherBetter bool   // throughput: true; time and memory: false
}

// Units the rows use.
var (
	UnitMBps    = Unit{"MB/s", true}
	UnitSeconds = Unit{"s", false}
	UnitRecPS   = Unit{"records/s", true}
	UnitBPR     = Unit{"B/record", false}
	UnitMiB     = Unit{"MiB", false}
)

// Row is one line of the results table: recfs's figure beside one peer's
// (or one machine limit's), measured as a pair.
type Row struct {
	ID      string  // what -only selects, e.g. "scan-1k-pebble"
	Section string  // "Scan", "Open", "Mount", "Big record", "Memory", "Append"
	Label   string  // what was measured
	Unit    Unit    // unit of both figures
	Recfs   float64 // recfs's figure; NaN when not measured
	Peer    string  // the peer's name, e.g. "pebble record.Reader"
	PeerVal float64 // the peer's figure; NaN when not measured
	Limit   bool    // the peer is a machine limit (cat, tmpfs), not a tool a user would pick
	Cmd     string  // the command that produced the figures
	Skip    string  // non-empty: why the row was not measured
	Detail  string  // extra facts (runs, spread)
	// PairRatio, when above 0, is the median of the ratios taken run by
	// run of an interleaved pair (recfs ahead above 1); Ratio returns it
	// instead of the ratio of the two medians, which drift apart on a
	// shared machine.
	PairRatio float64
}

// measured reports whether both figures exist.
func (r Row) measured() bool {
	return r.Skip == "" && !math.IsNaN(r.Recfs) && !math.IsNaN(r.PeerVal) && r.Recfs > 0 && r.PeerVal > 0
}

// Ratio returns how many times better recfs is than the peer (>1: recfs
// ahead, <1: recfs behind), whatever the unit's direction, or NaN.
func (r Row) Ratio() float64 {
	if !r.measured() {
		return math.NaN()
	}
	if r.PairRatio > 0 {
		return r.PairRatio
	}
	if r.Unit.HigherBetter {
		return r.Recfs / r.PeerVal
	}
	return r.PeerVal / r.Recfs
}

// Behind reports whether the row was measured and recfs came out behind
// the peer by more than tol (0.05 = 5%).
func (r Row) Behind(tol float64) bool {
	q := r.Ratio()
	return !math.IsNaN(q) && q < 1-tol
}

// formatFigure prints a figure with three significant digits (more for
// big numbers, which keep every integer digit).
func formatFigure(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return groupThousands(fmt.Sprintf("%.0f", v))
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// groupThousands inserts a thin separator (",") every three digits of an
// integer string.
func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatRatio prints a ratio as "2.3× faster"/"0.41× (behind)" style text:
// the factor and who is ahead.
func formatRatio(r Row) string {
	q := r.Ratio()
	if math.IsNaN(q) {
		return "—"
	}
	word := "better"
	switch r.Unit {
	case UnitMBps, UnitSeconds, UnitRecPS:
		word = "faster"
	case UnitBPR, UnitMiB:
		word = "smaller"
	}
	if math.Abs(q-1) < 0.005 {
		return "level (1.00×)"
	}
	if q >= 1 {
		return fmt.Sprintf("%s× %s", formatFactor(q), word)
	}
	return fmt.Sprintf("**%s× behind**", formatFactor(1/q))
}

// formatFactor prints a factor with two decimals below 10, one below 100.
func formatFactor(q float64) string {
	switch {
	case q >= 100:
		return fmt.Sprintf("%.0f", q)
	case q >= 10:
		return fmt.Sprintf("%.1f", q)
	}
	return fmt.Sprintf("%.2f", q)
}

// escapeCell makes s safe inside a Markdown table cell.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// writeTable writes rows as one Markdown table.
func writeTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| # | measured | unit | recfs | peer | peer figure | recfs vs peer | command |")
	fmt.Fprintln(w, "|---|---|---|--:|---|--:|---|---|")
	for _, r := range rows {
		peer := r.Peer
		if r.Limit {
			peer += " (machine limit)"
		}
		rec, pv, ratio := formatFigure(r.Recfs), formatFigure(r.PeerVal), formatRatio(r)
		if r.Skip != "" {
			ratio = "not measured: " + r.Skip
		}
		label := r.Label
		if r.Detail != "" {
			label += " (" + r.Detail + ")"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s | `%s` |\n",
			r.ID, escapeCell(label), r.Unit.Name, rec, escapeCell(peer), pv, escapeCell(ratio), escapeCell(r.Cmd))
	}
}

// summarize returns the summary lines: rows where recfs is behind a peer
// a user would pick first (worst first), then rows behind a machine limit,
// then rows where it is level or ahead, then the ones not measured.
func summarize(rows []Row) []string {
	var behindPeer, behindLimit, ahead, skipped []Row
	for _, r := range rows {
		switch {
		case !r.measured():
			skipped = append(skipped, r)
		case r.Behind(0.05) && !r.Limit:
			behindPeer = append(behindPeer, r)
		case r.Behind(0.05):
			behindLimit = append(behindLimit, r)
		default:
			ahead = append(ahead, r)
		}
	}
	byRatio := func(rs []Row) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Ratio() < rs[j].Ratio() })
	}
	byRatio(behindPeer)
	byRatio(behindLimit)
	byRatio(ahead)
	line := func(r Row) string {
		return fmt.Sprintf("- `%s` %s: recfs %s %s vs %s %s %s — %s",
			r.ID, r.Label, formatFigure(r.Recfs), r.Unit.Name, r.Peer, formatFigure(r.PeerVal), r.Unit.Name, formatRatio(r))
	}
	var out []string
	group := func(title string, rs []Row, always bool) {
		if len(rs) == 0 && !always {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, fmt.Sprintf("**%s (%d rows):**", title, len(rs)))
		if len(rs) == 0 {
			out = append(out, "- none")
		}
		for _, r := range rs {
			out = append(out, line(r))
		}
	}
	group("Behind a peer a user would pick, worst first", behindPeer, true)
	group("Behind a machine limit (the cost over the hardware's floor), worst first", behindLimit, true)
	group("Level (within 5%) or ahead", ahead, true)
	if len(skipped) > 0 {
		out = append(out, "", fmt.Sprintf("**Not measured (%d rows):**", len(skipped)))
		for _, r := range skipped {
			why := r.Skip
			if why == "" {
				why = "a figure is missing or not positive"
			}
			out = append(out, fmt.Sprintf("- `%s` %s: %s", r.ID, r.Label, why))
		}
	}
	return out
}
