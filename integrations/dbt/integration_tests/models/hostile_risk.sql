{{ qar.risk(ref('hostile'), ['we"ird', 'back`tick', 'zip code', 'select', "it's", 'ü'], p=3) }}
