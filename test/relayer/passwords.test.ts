// Password hashing (relayer/src/auth/passwords.ts): scrypt N=2^17 by default, hashes of the earlier N=2^15
// still verify and come back rehashed, a hasher with a smaller N (PASSWORD_SCRYPT_N) keeps a stronger hash,
// stored values that are not a hash this service made are refused, not thrown on; and the relayer's
// configuration accepts PASSWORD_SCRYPT_N only as a power of two from 2^14 to 2^20.
import assert from "node:assert/strict";
import { randomBytes, scryptSync } from "node:crypto";
import { describe, it } from "node:test";
import { MIN_SCRYPT_N, SCRYPT_PARAMS, passwordHasher } from "../../relayer/src/auth/passwords.ts";
import { loadConfig } from "../../relayer/src/config.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";

const { hash: hashPassword, check: checkPassword, verify: verifyPassword, needsRehash, decoyHash } = passwordHasher();
/** The lightest parameters the relayer accepts: for the tests whose subject is not the parameters (each hash at
 * N=2^17 is about half a second of a core). */
const light = passwordHasher({ ...SCRYPT_PARAMS, N: MIN_SCRYPT_N });

const CURRENT = /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

function legacyHash(password: string, N = 2 ** 15): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
  return ["scrypt", N, 8, 1, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

describe("password hashing", () => {
  it("hashes with scrypt N=2^17, r=8, p=1 and a fresh salt, and verifies", async () => {
    assert.deepEqual(SCRYPT_PARAMS, { N: 2 ** 17, r: 8, p: 1 });
    assert.deepEqual(passwordHasher().params, SCRYPT_PARAMS);
    const [a, b] = [await hashPassword("correct horse"), await hashPassword("correct horse")];
    assert.match(a, CURRENT);
    assert.notEqual(a, b, "a fresh salt each time");
    assert.equal(needsRehash(a), false);
    assert.equal(await verifyPassword("correct horse", a), true);
    assert.equal(await verifyPassword("correct horsE", a), false);
    assert.deepEqual(await checkPassword("correct horse", a), { ok: true });
  });

  it("verifies a hash made with N=2^15 and returns the password hashed anew, only when it matches", async () => {
    const old = legacyHash("s3cret");
    assert.equal(needsRehash(old), true);
    const right = await checkPassword("s3cret", old);
    assert.equal(right.ok, true);
    assert.match(right.rehashed ?? "", CURRENT);
    assert.equal(await verifyPassword("s3cret", right.rehashed!), true, "the new hash verifies the same password");
    assert.deepEqual(await checkPassword("not-it", old), { ok: false }, "no new hash for a wrong password");
  });

  it("keeps a decoy in the current format that no password matches", async () => {
    assert.match(decoyHash, CURRENT);
    assert.equal(needsRehash(decoyHash), false);
    assert.equal(await verifyPassword("", decoyHash), false);
    assert.equal(await verifyPassword("anything", decoyHash), false);
  });

  it("refuses stored values that are not a hash it could have made, without throwing", async () => {
    const good = await light.hash("pw");
    const [, , , , salt, hash] = good.split("$");
    for (const stored of [
      "",
      "plaintext",
      `bcrypt$131072$8$1$${salt}$${hash}`,
      `scrypt$100000$8$1$${salt}$${hash}`, // N not a power of two
      `scrypt$${2 ** 24}$8$1$${salt}$${hash}`, // N beyond what it accepts (2 GiB of memory)
      `scrypt$131072$0$1$${salt}$${hash}`,
      `scrypt$131072$8$99$${salt}$${hash}`,
      `scrypt$131072$8$1e0$${salt}$${hash}`,
      `scrypt$131072$8$1$$${hash}`,
      `scrypt$131072$8$1$${salt}$`,
      `scrypt$131072$8$1$${salt}$${hash}$extra`,
      `scrypt$131072$8$1$${salt}$${hash}!`,
    ]) {
      assert.equal(needsRehash(stored), true, stored);
      assert.deepEqual(await checkPassword("pw", stored), { ok: false }, stored);
    }
  });

  it("with a smaller N: hashes with it, keeps a hash of a larger N, rehashes one of a smaller N", async () => {
    const made = await light.hash("pw");
    assert.match(made, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.equal(await light.verify("pw", made), true);
    assert.match(light.decoyHash, /^scrypt\$16384\$/);
    const strong = await hashPassword("pw");
    assert.equal(light.needsRehash(strong), false, "a larger N is not made weaker");
    assert.deepEqual(await light.check("pw", strong), { ok: true });
    const weaker = legacyHash("pw", 2 ** 13);
    assert.equal(light.needsRehash(weaker), true);
    const rehashed = await light.check("pw", weaker);
    assert.equal(rehashed.ok, true);
    assert.match(rehashed.rehashed ?? "", /^scrypt\$16384\$/);
    // The default hasher replaces the lighter hash with its own.
    assert.equal(needsRehash(made), true);
    assert.match((await checkPassword("pw", made)).rehashed ?? "", CURRENT);
  });

  it("takes PASSWORD_SCRYPT_N from the relayer's configuration: a power of two from 2^14 to 2^20, default 2^17", () => {
    const env = MINIMAL_RELAYER_ENV;
    assert.deepEqual(loadConfig(env).passwordScrypt, SCRYPT_PARAMS);
    assert.deepEqual(loadConfig({ ...env, PASSWORD_SCRYPT_N: "16384" }).passwordScrypt, { ...SCRYPT_PARAMS, N: 2 ** 14 });
    for (const bad of ["8192", "100000", String(2 ** 21), "2e5", "many"]) {
      assert.throws(() => loadConfig({ ...env, PASSWORD_SCRYPT_N: bad }), /PASSWORD_SCRYPT_N/, bad);
    }
  });

  it("verifies many at once (they queue for the hashing slots)", async () => {
    const stored = await light.hash("queue");
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => light.verify(i === 2 ? "queue" : "other", stored)));
    assert.deepEqual(results, [false, false, true, false, false]);
  });
});
