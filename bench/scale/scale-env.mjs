// Imported first by bench/scale/run.mjs: the scale bench seeds millions of rows and drops its
// database at the end, so it never shares the database of `pnpm bench` (bench/lib/platform.mjs
// reads BENCH_DATABASE_URL when it is loaded, after this module).
process.env.BENCH_DATABASE_URL =
  process.env.BENCH_SCALE_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/plantstore_bench_scale';
