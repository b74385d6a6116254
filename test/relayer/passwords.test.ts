// Password hashing (relayer/src/auth/passwords.ts): scrypt N=2^17, hashes of the earlier N=2^15 still
// verify and come back rehashed, stored values that are not a hash this service made are refused, not
// thrown on.
import assert from "node:assert/strict";
import { randomBytes, scryptSync } from "node:crypto";
import { describe, it } from "node:test";
import { SCRYPT_PARAMS, checkPassword, decoyHash, hashPassword, needsRehash, verifyPassword } from "../../relayer/src/auth/passwords.ts";

const CURRENT = /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

function legacyHash(password: string, N = 2 ** 15): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
  return ["scrypt", N, 8, 1, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

describe("password hashing", () => {
  it("hashes with scrypt N=2^17, r=8, p=1 and a fresh salt, and verifies", async () => {
    assert.deepEqual(SCRYPT_PARAMS, { N: 2 ** 17, r: 8, p: 1 });
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
    const good = await hashPassword("pw");
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

  it("verifies many at once (they queue for the hashing slots)", async () => {
    const stored = await hashPassword("queue");
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => verifyPassword(i === 2 ? "queue" : "other", stored)));
    assert.deepEqual(results, [false, false, true, false, false]);
  });
});
