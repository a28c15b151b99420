-- Claim or renew a consumer role (e.g. the in-order Scanner) for $3.
SELECT current_holder FROM quick.claim_role($1, $2, $3::interval)
