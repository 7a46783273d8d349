// Package recfsio reads record files as an Apache Beam source: every
// format recfs reads (leveldb-family logs, App Engine records, grailbio
// recordio, TFRecord with or without gzip, Prometheus and etcd WALs, Kafka
// segments), from local paths or s3:// URLs.
//
// Read is a splittable DoFn whose restriction is a range of record numbers
// of one file. The initial restriction comes from recfs's index of the
// file — a table published next to an S3 object (`recfs index --publish`),
// else one saved in the worker's cache directory, else one scan — and is
// cut into ranges of about Options.SplitBytes of payload, so a large file
// is read by many workers with no resynchronisation heuristics: each range
// starts at an exact record boundary. Ranges are tracked with Beam's
// offsetrange tracker, so a runner can also split them while they run.
//
// Damaged files yield the same records as `recfs cat` (damage is skipped);
// the damage is counted in the metrics named in Metric*.
//
// Files open as recfs cat and recfs mount open them (package fs/open, over
// recfs's storage seam: local paths, s3:// objects, http(s):// URLs), not
// through Beam's filesystem registry: the index needs random access (io.ReaderAt) with
// recfs's version pinning, deadlines and saved-table checks, which Beam's
// filesystem interface (sequential readers) does not give.
package recfsio
