package recfsio

import (
	"context"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
)

// MetricNamespace is the namespace of the counters Read reports.
const MetricNamespace = "recfsio"

// The counters Read reports, in MetricNamespace. Damage is counted once
// per file (by the restriction that starts at its first record); each
// damaged file also gets a counter MetricDamageFile+path of its skipped
// bytes.
const (
	MetricRecords      = "records"      // records read
	MetricBytes        = "bytes"        // payload bytes read
	MetricRestrictions = "restrictions" // restrictions processed
	MetricSplits       = "splits"       // dynamic splits the runner made
	MetricDamage       = "damage"       // damaged regions skipped
	MetricDamageBytes  = "damage-bytes" // bytes of damage skipped
	MetricDamageFile   = "damage-bytes:"
	MetricIndexBuilt   = "index-built"  // files whose index a worker built by a scan
	MetricIndexLoaded  = "index-loaded" // files whose index a worker loaded (saved or published)
)

var (
	recordsRead  = beam.NewCounter(MetricNamespace, MetricRecords)
	bytesRead    = beam.NewCounter(MetricNamespace, MetricBytes)
	restrictions = beam.NewCounter(MetricNamespace, MetricRestrictions)
	splits       = beam.NewCounter(MetricNamespace, MetricSplits)
	damage       = beam.NewCounter(MetricNamespace, MetricDamage)
	damageBytes  = beam.NewCounter(MetricNamespace, MetricDamageBytes)
	indexBuilt   = beam.NewCounter(MetricNamespace, MetricIndexBuilt)
	indexLoaded  = beam.NewCounter(MetricNamespace, MetricIndexLoaded)
)

// reportFile counts, once per file, how the worker reading its first
// record got the file's index, and the file's damage.
func reportFile(ctx context.Context, path string, f *file) {
	if f.t.Info().Loaded == "cached" {
		indexLoaded.Inc(ctx, 1)
	} else {
		indexBuilt.Inc(ctx, 1)
	}
	reportDamage(ctx, path, f)
}

// reportDamage counts f's damage.
func reportDamage(ctx context.Context, path string, f *file) {
	d := f.t.Damage()
	if len(d) == 0 {
		return
	}
	var b int64
	for _, x := range d {
		b += x.Len
	}
	damage.Inc(ctx, int64(len(d)))
	damageBytes.Inc(ctx, b)
	beam.NewCounter(MetricNamespace, MetricDamageFile+path).Inc(ctx, b)
}

// Summary is what a pipeline's Read counters say, as recfs-beam prints it.
type Summary struct {
	Records      int64         `json:"records"`
	Bytes        int64         `json:"bytes"`
	Restrictions int64         `json:"restrictions"`
	Splits       int64         `json:"splits"`
	Damage       DamageSummary `json:"damage"`
	IndexBuilt   int64         `json:"index_built"`  // files a worker scanned to index
	IndexLoaded  int64         `json:"index_loaded"` // files whose saved or published index a worker loaded
}

// DamageSummary is the damage Read skipped: regions and bytes, and the
// bytes of each damaged file.
type DamageSummary struct {
	Regions int64            `json:"regions"`
	Bytes   int64            `json:"bytes"`
	Files   map[string]int64 `json:"files,omitempty"`
}

// SummaryOf adds up the Read counters of a finished pipeline (committed
// values where the runner reports them, else attempted).
func SummaryOf(r beam.PipelineResult) Summary {
	var s Summary
	q := r.Metrics().Query(func(sr metrics.SingleResult) bool { return sr.Namespace() == MetricNamespace })
	for _, c := range q.Counters() {
		v := c.Result()
		switch name := c.Name(); name {
		case MetricRecords:
			s.Records += v
		case MetricBytes:
			s.Bytes += v
		case MetricRestrictions:
			s.Restrictions += v
		case MetricSplits:
			s.Splits += v
		case MetricDamage:
			s.Damage.Regions += v
		case MetricDamageBytes:
			s.Damage.Bytes += v
		case MetricIndexBuilt:
			s.IndexBuilt += v
		case MetricIndexLoaded:
			s.IndexLoaded += v
		default:
			if p, ok := strings.CutPrefix(name, MetricDamageFile); ok {
				if s.Damage.Files == nil {
					s.Damage.Files = map[string]int64{}
				}
				s.Damage.Files[p] += v
			}
		}
	}
	return s
}
