// Drives @roboflow/tfrecords for recfs's tests (test/internal/tfrnode).
//   node tfr.js build OUT PAYLOADS.json   write the base64 payloads as a TFRecord file with TFRecordsBuilder.buildTFRecords
//   node tfr.js examples N OUT.json       make N serialized Example messages with TFRecordsBuilder: {payloads, k, blob, n}
//   node tfr.js labelled N OUT.json       make N Examples of several value lists: {payloads, features: [{NAME: values}]}
//   node tfr.js read FILE                 read FILE with TFRecordsReader and print {count, k, blob, n} as JSON
//   node tfr.js scan FILE                 walk FILE's framing with the package's crc32c/maskCrc/readInt64 helpers; print {count, bytes}
"use strict";
const fs = require("fs");
const path = require("path");
const src = path.join(__dirname, "node_modules", "@roboflow", "tfrecords", "src");
const { TFRecordsBuilder, FeatureType } = require(path.join(src, "tensorFlowBuilder.js"));
const { TFRecordsReader } = require(path.join(src, "tensorFlowReader.js"));
const helpers = require(path.join(src, "tensorFlowHelpers.js"));

// The reader reports checksum failures with console.log; keep stdout for the result.
console.log = (...a) => process.stderr.write(a.join(" ") + "\n");
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const [mode, a1, a2] = process.argv.slice(2);

switch (mode) {
  case "build": {
    const payloads = JSON.parse(fs.readFileSync(a2, "utf8")).map((s) => Buffer.from(s, "base64"));
    fs.writeFileSync(a1, TFRecordsBuilder.buildTFRecords(payloads));
    break;
  }
  case "examples": {
    const n = Number(a1);
    const res = { payloads: [], k: [], blob: [], n: [] };
    let x = 12345;
    for (let i = 0; i < n; i++) {
      const blob = Buffer.alloc((i * 977) % 70000);
      for (let j = 0; j < blob.length; j++) { x = (x * 1103515245 + 12345) >>> 0; blob[j] = x >>> 24; }
      const b = new TFRecordsBuilder();
      b.addFeature("k", FeatureType.String, "record-" + i);
      b.addFeature("blob", FeatureType.Binary, blob);
      b.addFeature("n", FeatureType.Int64, i * 7);
      res.payloads.push(b.build().toString("base64"));
      res.k.push("record-" + i);
      res.blob.push(blob.toString("base64"));
      res.n.push(i * 7);
    }
    fs.writeFileSync(a2, JSON.stringify(res));
    break;
  }
  case "labelled": {
    // Every feature type, lists of several values, UTF-8 text; bytes as base64.
    const names = ["horse", "zebra", "café au lait", "tab\there", "ütf-8 ✓"];
    const res = { payloads: [], features: [] };
    for (let i = 0; i < Number(a1); i++) {
      const f = {
        label: [i % 10],
        name: [names[i % names.length]],
        weights: [i / 4, -1.5, 1e-3 * i],
        ids: [i, -i * 1000003, 4096],
        blob: [Buffer.from([i & 255, 0, 255, 10]).toString("base64")],
      };
      const b = new TFRecordsBuilder();
      b.addArrayFeature("label", FeatureType.Int64, f.label);
      b.addArrayFeature("name", FeatureType.String, f.name);
      b.addArrayFeature("weights", FeatureType.Float, f.weights);
      b.addArrayFeature("ids", FeatureType.Int64, f.ids);
      b.addArrayFeature("blob", FeatureType.Binary, f.blob.map((s) => Buffer.from(s, "base64")));
      res.payloads.push(b.build().toString("base64"));
      res.features.push(f);
    }
    fs.writeFileSync(a2, JSON.stringify(res));
    break;
  }
  case "read": {
    const r = new TFRecordsReader(fs.readFileSync(a1));
    const res = { count: r.length, k: [], blob: [], n: [] };
    for (let i = 0; i < r.length; i++) {
      res.k.push(r.getFeature(i, "k", FeatureType.String));
      res.blob.push(Buffer.from(r.getFeature(i, "blob", FeatureType.Binary)).toString("base64"));
      res.n.push(Number(r.getFeature(i, "n", FeatureType.Int64)));
    }
    out(res);
    break;
  }
  case "scan": {
    // TFRecordsReader's loop without the protobuf decoding, over a file
    // read in one piece as the reader takes it. The package's maskCrc
    // refuses a CRC of 0 (its null guard), which is the CRC of empty data:
    // zero-length records get the mask of 0 computed here instead.
    const maskCrc = (c) => (c === 0 ? 0xa282ead8 : helpers.maskCrc(c));
    const buf = fs.readFileSync(a1);
    let pos = 0, count = 0, bytes = 0;
    while (pos < buf.length) {
      const lb = buf.subarray(pos, pos + 8);
      const len = helpers.readInt64(lb);
      if (maskCrc(helpers.crc32c(lb)) !== buf.readUInt32LE(pos + 8)) throw new Error("length crc at " + pos);
      const data = buf.subarray(pos + 12, pos + 12 + len);
      if (maskCrc(helpers.crc32c(data)) !== buf.readUInt32LE(pos + 12 + len)) throw new Error("data crc at " + pos);
      pos += 16 + len; count++; bytes += len;
    }
    out({ count, bytes });
    break;
  }
  default:
    process.stderr.write("usage: tfr.js build|examples|read|scan ...\n");
    process.exit(2);
}
