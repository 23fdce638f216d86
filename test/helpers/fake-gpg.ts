import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A stand-in for gpg, as git calls it (`gpg.program`): signing prints a
 * signature block (and SIG_CREATED on the status descriptor, stderr here);
 * verifying says the signature is good. Signed commits without a key or a
 * package to install.
 */
const FAKE_GPG = `#!/bin/sh
case "$*" in
  *-bsau*) cat >/dev/null; echo '[GNUPG:] SIG_CREATED D 1 8 00 1 0 fake' >&2
    printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n' ;;
  *--verify*) cat >/dev/null; echo 'gpg: Good signature from "fake"' >&2; echo '[GNUPG:] GOODSIG 0 fake' ;;
esac
`;

/** Writes the stand-in into `folder`; its path, for `gpg.program`. */
export function installFakeGpg(folder: string): string {
  const gpg = join(folder, "fake-gpg");
  writeFileSync(gpg, FAKE_GPG);
  chmodSync(gpg, 0o755);
  return gpg;
}
