// Package promdecode renders the records of a Prometheus TSDB write-ahead
// log (the payloads codec/wlog reads) as lines a user can grep: every
// record type of Prometheus's tsdb/record package, one line per series,
// sample, tombstone, exemplar, metadata entry, m-map marker or histogram,
// a sample's line carrying the labels of its series when the series
// record came earlier in the same WAL. It is the decoder of --decode
// prometheus (package codec/decode says how decoders plug in).
//
// Text lines, fields separated by single spaces, labels in Prometheus's
// text syntax (metric name first, values quoted with \\, \" and \n
// escaped) and times in RFC 3339 with milliseconds, UTC:
//
//	series 12 http_requests_total{code="500", path="/api"}
//	sample 12 2026-11-26T09:22:01.512Z 7 http_requests_total{code="500", path="/api"}
//	sample 12 2026-11-26T09:22:01.512Z 7 st=2026-11-26T09:00:00.000Z http_requests_total{…}
//	tombstone 12 2026-11-26T09:00:00.000Z 2026-11-26T10:00:00.000Z http_requests_total{…}
//	exemplar 12 2026-11-26T09:22:01.512Z 0.25 {trace_id="abc"} http_requests_total{…}
//	metadata 12 counter unit="requests" help="Requests served." http_requests_total{…}
//	mmap-marker 12 file=1 offset=32 http_requests_total{…}
//	histogram 12 2026-…Z schema=1 count=10 sum=18.5 zero_threshold=0.001 zero_count=2 counter_reset=not_reset pos_spans=0:2,1:1 pos_buckets=1,2,-1 neg_spans= neg_buckets= http_…{…}
//	float-histogram 12 …   (the same fields, counts as floats)
//	min-valid-time 2026-11-25T00:00:00.000Z
//	unknown type=200 hex=c8010203
//
// A sample value is Go's shortest 'g' form, NaN, +Inf, -Inf, or
// stale-NaN for Prometheus's staleness marker. A time outside years 0 to
// 9999 is shown as its integer milliseconds. Custom-bucket histograms add
// custom_values=…; records with start times (the V2 encodings) add st=…
// where a sample has one. A series whose record was not seen before shows
// no labels.
//
// With JSON output each line is an object: {"n":…, "type":"sample",
// "ref":12, "t":"2026-…Z", "t_ms":…, "value":7, "labels":{"__name__":…}};
// a non-finite value is the string "NaN", "+Inf", "-Inf" or "stale-NaN".
//
// Series labels are learned from the records before the one shown (of the
// same file and, for a segment named by its number in a wal/ or checkpoint
// directory, of every lower-numbered segment beside it and, after segment
// N, of the newest checkpoint.N directory beside it, which holds the
// series of the segments Prometheus deleted; reading a checkpoint needs a
// [decode.Dir] that is a [decode.SubDirs]), within the state
// budget: once the labels kept reach it, series met later are not kept,
// and their samples show no labels but "labels=budget" (the same records
// whatever the order they are read in).
package promdecode
