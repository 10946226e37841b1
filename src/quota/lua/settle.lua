settle(reservationsKey, creditsKey, twinCreditsKey, topupKey, id, allowance, topup, creditKeyTtlMs, twinKeyTtlMs, usageKey, usage,
  usageTtlMs, usageHourKey, usageHour, usageHourTtlMs)
return 0
