// Package leveldb reads and writes the leveldb log format (as LevelDB and
// goleveldb write it) and its flavours: App Engine's zero-padded
// blocks and the recyclable and WAL-sync chunks of RocksDB and pebble
// write-ahead logs. A [Scanner] walks a log once and yields record
// locations; [ReadRecord] reads a record back through its location;
// [ScanParallel] splits one scan over goroutines and stitches the parts; a
// [Writer] frames records as the reference writers do.
package leveldb
