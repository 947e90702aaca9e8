// Reference values for loxo's Ull from hash4j's UltraLogLog (github.com/dynatrace-oss/hash4j,
// commit 41d814f): the same SplitMix64/fmix64 digest streams as loxo_tests::DistinctKeys,
// register bytes (as FNV-1a 64 of the state) and the three estimates at checkpoints.
// Build: javac -d out hash4j's distinctcount/{UltraLogLog,DistinctCountUtil,DistinctCounter,
// StateChangeObserver,MartingaleEstimator,HyperLogLog}.java UllOracle.java;
// run: java -cp out com.dynatrace.hash4j.distinctcount.UllOracle > ull_hash4j.csv
package com.dynatrace.hash4j.distinctcount;

public final class UllOracle {
  static long fmix64(long x) {
    x ^= x >>> 33;
    x *= 0xff51afd7ed558ccdL;
    x ^= x >>> 33;
    x *= 0xc4ceb9fe1a85ec53L;
    x ^= x >>> 33;
    return x;
  }

  static long fnv(byte[] b) {
    long h = 0xcbf29ce484222325L;
    for (byte x : b) {
      h ^= (x & 0xff);
      h *= 0x100000001b3L;
    }
    return h;
  }

  public static void main(String[] args) {
    System.out.println("p,stream,n,state_fnv1a64,fgra,ml,martingale");
    int[] ps = {4, 8, 12, 14};
    for (int p : ps) {
      long m = 1L << p;
      long[] cps = {1, 2, 10, 100, m / 8, m, 3 * m, 10 * m, 100 * m, 1000 * m};
      for (int s = 0; s < 3; s++) {
        UltraLogLog u = UltraLogLog.create(p);
        MartingaleEstimator mart = new MartingaleEstimator();
        long state = 0x4c4f584f554c4c00L + s;
        long n = 0;
        for (long cp : cps) {
          if (cp > 20_000_000L) break;
          while (n < cp) {
            state += 0x9e3779b97f4a7c15L;
            u.add(fmix64(state), mart);
            n++;
          }
          System.out.println(p + "," + s + "," + n + "," + Long.toUnsignedString(fnv(u.getState()))
              + "," + u.getDistinctCountEstimate(UltraLogLog.OPTIMAL_FGRA_ESTIMATOR)
              + "," + u.getDistinctCountEstimate(UltraLogLog.MAXIMUM_LIKELIHOOD_ESTIMATOR)
              + "," + mart.getDistinctCountEstimate());
        }
      }
    }
  }
}
