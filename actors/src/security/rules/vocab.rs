//! Per-language vocabulary the multilingual rules are built from.
//!
//! Each field is a regex alternation over lower-cased, NFKC-normalized
//! text. Latin-script words are written as stems where inflection matters
//! (`ignor`, `instru`), Cyrillic and CJK as the forms people actually
//! type. The words are our own, chosen from the attack families in the
//! dev part of `actors/tests/data/screening/` and the common phrasings of
//! each language; none is copied from a list.

/// The words one language contributes to the generated rules.
pub(crate) struct Vocab {
    /// ISO 639-1 code.
    pub lang: &'static str,
    /// Verbs that discard instructions ("ignore", "forget", …).
    pub override_verbs: &'static str,
    /// What marks the instructions as the model's own or earlier ones
    /// ("previous", "your", "all", …).
    pub prior: &'static str,
    /// "instructions", "rules", "guidelines", …
    pub rule_nouns: &'static str,
    /// What declares earlier instructions dead ("are void", "no longer
    /// apply", "sont caduques", "作废"): the override said as a statement.
    pub void_predicates: &'static str,
    /// "you are now", "from now on you are", …
    pub you_now: &'static str,
    /// "pretend to be", "act as", "play the role of", …
    pub pretend: &'static str,
    /// What makes a persona an attack ("without restrictions", "no rules").
    pub unrestricted: &'static str,
    /// "reveal", "show", "print", …
    pub reveal_verbs: &'static str,
    /// "system prompt", "your instructions", …
    pub prompt_nouns: &'static str,
    /// "send", "forward", "upload", …
    pub send_verbs: &'static str,
    /// Things worth stealing: history, passwords, keys, tokens, …
    pub sensitive: &'static str,
    /// "new instructions", "system" (for forged headers).
    pub header_words: &'static str,
    /// Questions about the instructions the model itself received ("what
    /// were you told before …", "quelles consignes as-tu reçues"): asking
    /// for the hidden prompt without naming it.
    pub told_question: &'static str,
}

/// The nine languages issue 12 asks for.
pub(crate) const LANGUAGES: &[Vocab] = &[
    Vocab {
        lang: "en",
        override_verbs: r"ignore|disregard|forget|skip|override|overrule|discard|abandon|drop|throw out|set aside|bypass|neglect|pay no (?:attention|heed) to|put aside|nullify|scratch|revoke|rescind|reset|stop (?:following|obeying)|do not (?:abide by|follow|obey)|don't (?:abide by|follow|obey)|no longer (?:follow|obey)",
        prior: r"previous|prior|above|earlier|preceding|original|initial|old|existing|foregoing|former|system|your|all|any|every",
        rule_nouns: r"instructions?|rules?|prompts?|directives?|directions|guidelines?|guidance|constraints|programming|orders|commands|polic(?:y|ies)|restrictions|safeguards|training|everything (?:above|before|else|you)",
        void_predicates: r"(?:are|is|were|have been|has been) (?:now |hereby |officially )?(?:void|null|revoked|rescinded|cancell?ed|invalid|obsolete|outdated|out of date|expired|deprecated|lifted|suspended|withdrawn|overridden|superseded)|no longer (?:valid|appl(?:y|ies)|in (?:effect|force)|binding|matter)|(?:do|does)n'?t (?:apply|count) (?:anymore|any more)|appl(?:y|ies) (?:no more|anymore|any more)",
        you_now: r"you are now|you're now|you are no longer|you're no longer|from now on,? you(?:'re| are| will be)?|you have become|you will now be|henceforth,? you|from this (?:moment|point)(?: on)?,? you(?:\'re| are| will be)?|you(?:\'re| are) hereby|you(?:\'re| are) (?:going to be|playing)",
        pretend: r"pretend(?: to be| you are| you're| that you are)?|act(?:ing)? as|act like|behave (?:as|like)|role-?play(?: as)?|play the (?:role|part) of|simulate|impersonate|you will act as|assume the (?:persona|role|identity) of|take on the (?:persona|role) of|imagine (?:that )?you(?:\'re| are)|become",
        unrestricted: r"\bdan\b|jailbr[eo]ak|unrestricted|unfiltered|uncensored|unlimited|unbound|unchained|amoral|unethical|evil|malicious|no (?:longer )?(?:bound|restricted)|without (?:any )?(?:restrictions?|limits?|limitations|rules|filters?|guidelines|censorship|ethics|morals)|no (?:restrictions?|limits|rules|filters?|guidelines|content polic(?:y|ies)|ethical|moral|safety)|free (?:of|from) (?:all |any )?(?:restrictions|rules|limits|guidelines)|developer mode|god mode|(?:ignores?|ignoring|bypass(?:es)?) (?:its|all|any|your) (?:content polic|safety|rules|guidelines)|bound by|zero (?:content )?(?:restrictions|rules|limits|filters)|never refuses|(?:no|without) (?:morals|ethics|conscience)|ignores? (?:all )?(?:ethics|morals)|no (?:ethical|moral) (?:limits|guidelines|restrictions|boundaries)",
        reveal_verbs: r"reveal|print|show|output|repeat|leak|dump|display|disclose|tell me|give me|write out|recite|spell[- ]check|encode|return|paste|expose|share|translate|provide|list|recite|quote|copy|reproduce|transcribe|spell out|write down|echo|log|read out|(?:i need|i want|let me|i\'d like|allow me) to (?:see|read|view)",
        prompt_nouns: r"your (?:\w+ ){0,3}?(?:system message|developer message|directives|directions|preamble|pre-?prompt|initial context|setup instructions|initiali[sz]ation)|initiali[sz]ation (?:string|text|prompt|message)|the (?:instructions|text|rules|words) you (?:were|have been|\'ve been|got) (?:given|told|provided|fed)|your (?:\w+ ){0,3}?(?:instructions|prompt|configuration|guidelines|rules|programming)|the (?:\w+ ){0,2}?(?:system prompt|system message|system instructions|initial prompt|initial instructions|original instructions|starting instructions|hidden instructions|hidden prompt|rules you were given)|(?:the )?(?:previous|above|initial|original|hidden|secret) (?:instructions|prompt|text)|everything (?:above|before this)|the text above|system prompt",
        send_verbs: r"send|post|upload|forward|dm|share|exfiltrate|transmit|leak|copy|e-?mail|mail|submit|include|append|attach|embed|report|push|deliver|beam|pipe",
        sensitive: r"conversation|chat (?:history|log)|history|transcript|memor(?:y|ies)|api[ _-]?keys?|keys|passwords?|passwd|credentials?|secrets?|tokens?|cookies?|private keys?|ssh keys?|session|personal data|system prompt|env(?:ironment)? var|\.env|everything",
        header_words: r"system|system prompt|system message|system override|system note|system update|developer|assistant|admin(?:istrator)?",
        told_question: r"\bwhat (?:were|have) you been (?:told|given|instructed)|\bwhat (?:were|was) you (?:told|given|instructed|programmed)\b|\bwhat (?:did|do) (?:they|your (?:developers?|creators?|operators?|owners?|makers?)|the (?:developers?|operators?|system)) (?:tell|instruct|give) you|\bwhat (?:\w+ )?(?:instructions|rules|guidelines|directions|orders|directives)\b[^?\n]{0,30}?\byou\b[^?\n]{0,20}?\b(?:given|told|received|receive|get|got)\b|\bwhat (?:are|were) you not (?:supposed|allowed|permitted) to (?:tell|say|reveal|share|disclose)|\bwhat(?:'s| is| are| were)\b[^?\n]{0,40}?\byour (?:\w+ ){0,2}?(?:instructions|system prompt|initial prompt|guidelines|configuration)\b|\bwhat (?:\w+ ){0,3}?(?:instructions|rules|guidelines|directions|orders|directives)\b[^?\n]{0,40}?\b(?:gave|give|handed|taught) you\b",
    },
    Vocab {
        lang: "fr",
        override_verbs: r"ignore|ignorez|ignorer|oublie|oubliez|oublier|ne tiens (?:plus |pas )?compte|ne tenez (?:plus |pas )?compte|fais abstraction|faites abstraction|passe outre|outrepasse|abandonne|laisse tomber|laissez tomber|annule|annulez|ne respecte plus|ne respectez plus|ne suis plus|arrête de suivre|cesse de suivre",
        prior: r"précédent|antérieur|d'avant|initia|origin|du système|système|tes|vos|toutes|tous",
        rule_nouns: r"instructions?|consignes?|règles?|directives?|ordres|restrictions",
        void_predicates: r"(?:sont|est|ont été|a été) (?:désormais |maintenant )?(?:nulles?|annulée?s?|caduques?|obsolètes?|révoquée?s?|levée?s?|invalide?s?)|ne (?:valent|s'appliquent|comptent) plus|n'(?:ont|a) plus (?:cours|de valeur)|ne sont plus (?:valables|valides|en vigueur)",
        you_now: r"tu es (?:maintenant|désormais|dorénavant)|à partir de maintenant,? tu|dorénavant,? tu|désormais,? tu|vous êtes (?:maintenant|désormais)|désormais,? tu (?:es|incarnes|joues|seras)",
        pretend: r"fais semblant|faites semblant|joue(?:z)? le rôle|agis comme|agissez comme|comporte-toi comme|imite|joue(?:s|z)? le (?:rôle|personnage)|incarne(?:s|z)?|imagine que tu es|imaginez que vous êtes",
        unrestricted: r"sans (?:aucune? )?(?:restrictions?|limites?|règles?|filtres?|censure|contraintes?)|sans filtre|sans limite|non censuré|débridé|mode développeur|aucune (?:limite|restriction|règle|censure)|sans (?:aucune )?censure|sans morale|sans éthique",
        reveal_verbs: r"révèle|révélez|affiche|affichez|montre|montrez|donne|donnez|imprime|répète|divulgue|dévoile|écris|recopie|recopiez|cite|récite|copie",
        prompt_nouns: r"prompt (?:du )?système|invite système|message système|instructions (?:système|initiales|cachées)|tes instructions|vos instructions|prompt (?:initial|de départ)|texte de configuration|ton prompt|votre prompt|(?:instructions|consignes) (?:de départ|du début|initiales)",
        send_verbs: r"envoie|envoyez|envoyer|transmets|transmettez|transfère|transférez|publie|téléverse|copie|expédie",
        sensitive: r"historique|conversation|clés?(?: api)?|mots? de passe|identifiants|secrets?|jetons?|cookies|mémoire|données personnelles",
        header_words: r"système|systeme|nouvelles instructions|nouvelles consignes|développeur",
        told_question: r"(?:quelles?|quoi)[^?\n]{0,40}?(?:instructions|consignes|règles|directives)[^?\n]{0,30}?(?:as-tu|avez-vous|t'a-t-on|vous a-t-on|tu as|on t'a|on vous a)\s*(?:reçu|donné|dit|fourni)|qu'est-ce qu'on (?:t'a|vous a) dit|que t'a-t-on dit",
    },
    Vocab {
        lang: "de",
        override_verbs: r"ignorier|vergiss|vergessen sie|außer kraft|missachte|missachten sie|übergehe|verwirf|setze? .{0,40}außer kraft|beachte .{0,30}nicht mehr|hör(?:e|en sie)? auf|befolge .{0,30}nicht mehr|folge .{0,30}nicht mehr",
        prior: r"vorherig|bisherig|vorigen|früher|obig|ursprünglich|anfänglich|alle|deine|ihre|system",
        rule_nouns: r"anweisung|regeln|richtlinien|vorgaben|instruktion|befehle|einschränkungen",
        void_predicates: r"(?:sind|ist|wurden|wurde) (?:ab sofort |jetzt |nun |hiermit )?(?:ungültig|aufgehoben|nichtig|hinfällig|außer kraft|widerrufen|obsolet|veraltet|gestrichen)|gelten (?:ab sofort |jetzt |nun )?nicht mehr|nicht mehr gültig",
        you_now: r"du bist (?:jetzt|nun|ab jetzt|ab sofort|von nun an)|ab (?:jetzt|sofort) (?:bist|verhältst|handelst) du|von nun an bist du|sie sind (?:jetzt|nun)|ab (?:jetzt|sofort) spielst du|du bist ab (?:jetzt|sofort)",
        pretend: r"tu so,? als|tue so,? als|gib dich als|spiele? die rolle|verhalte dich (?:wie|als)|verhältst du dich (?:wie|als)|agiere als|handle als|handelst du als|stell dir vor,? du (?:bist|wärst)|stellen sie sich vor,? sie sind|spiel(?:e|st)? (?:du )?(?:die rolle|den|die)",
        unrestricted: r"ohne (?:jegliche |irgendwelche |alle )?(?:einschränkungen|regeln|filter|grenzen|zensur|sicherheitsregeln|beschränkungen)|uneingeschränkt|ungefiltert|unzensiert|entwicklermodus|ohne (?:jede |jegliche )?zensur|keinerlei (?:beschränkungen|einschränkungen|regeln|grenzen|filter)|ohne moral|ohne ethik",
        reveal_verbs: r"zeig|gib .{0,30}aus|verrate|enthülle|drucke|wiederhole|nenne|offenbare|liste|gib|schreib|zitiere|kopiere|druck",
        prompt_nouns: r"systemprompt|system-prompt|systemnachricht|systemanweisung|deine anweisungen|ursprünglichen anweisungen|versteckten anweisungen|anfangsanweisungen|startanweisungen|deinen prompt|ihren prompt|anfangsprompt",
        send_verbs: r"sende|schick|übermittle|lade .{0,40}hoch|leite .{0,40}weiter|poste|kopiere|maile",
        sensitive: r"verlauf|konversation|gespräch|passw|kennw|api-schlüssel|schlüssel|zugangsdaten|geheimnis|token|cookies|speicher",
        header_words: r"system|neue anweisungen|entwickler",
        told_question: r"welche (?:anweisungen|regeln|vorgaben|instruktionen|befehle)[^?\n]{0,40}?(?:hast du|haben sie|wurden dir|wurden ihnen|hat man dir|hat man ihnen)[^?\n]{0,40}?(?:bekommen|erhalten|gegeben|gesagt)|was (?:wurde|hat man) (?:dir|ihnen)[^?\n]{0,30}?(?:gesagt|vorgegeben|aufgetragen)",
    },
    Vocab {
        lang: "es",
        override_verbs: r"ignora|ignore|ignoren|ignorar|olvida|olvide|olviden|olvidar|descarta|omite|pasa por alto|no (?:sigas|hagas caso)|deja de lado|deje de lado|anula|anule|deja de seguir|deje de seguir|olvídate de",
        prior: r"anterior|previa|previo|original|inicial|del sistema|de tu sistema|de su sistema|tus|sus|todas|todos",
        rule_nouns: r"instrucci|indicaciones|reglas|directrices|normas|órdenes|restricciones",
        void_predicates: r"ya no (?:valen|sirven|aplican|se aplican|son válidas|están vigentes|cuentan)|(?:quedan|están|son|fueron) (?:anuladas|revocadas|canceladas|sin efecto|inválidas|obsoletas)|sin validez",
        you_now: r"(?:ahora|ya) eres|eres ahora|a partir de ahora,? (?:eres|serás|tú)|desde ahora,? (?:eres|serás)|usted es ahora|desde este momento,? (?:eres|serás)",
        pretend: r"finge|finja|haz como si|actúa como|actúe como|compórtate como|interpreta el papel|juega el papel|simula ser|haz (?:el|de) papel|imagina que eres|imagine que es|hazte pasar por",
        unrestricted: r"sin (?:ningún tipo de |ninguna )?(?:restricciones|límites|reglas|filtros|censura)|sin filtros|sin límites|sin restricciones|modo desarrollador|sin (?:ninguna )?(?:censura|regla|norma|ética|moral)\w*",
        reveal_verbs: r"revela|muestra|muéstrame|imprime|repite|dime|escribe|divulga|enseña|copia|cita|recita|transcribe|reproduce",
        prompt_nouns: r"prompt del sistema|mensaje del sistema|instrucciones (?:del sistema|iniciales|ocultas|originales)|tus instrucciones|tu prompt|prompt inicial|mensaje de sistema|instrucciones de sistema",
        send_verbs: r"envía|envíe|enviar|manda|mande|reenvía|sube|suba|publica|copia|transmite",
        sensitive: r"historial|conversación|contraseñas?|claves?|credenciales|secretos?|tokens?|cookies|memoria|datos personales",
        header_words: r"sistema|nuevas instrucciones|desarrollador",
        told_question: r"qué (?:instrucciones|reglas|indicaciones|órdenes|directrices)[^?\n]{0,40}?(?:te|le|les) (?:dieron|han dado|dio|dijeron|pasaron)|qué (?:instrucciones|reglas|indicaciones)[^?\n]{0,20}?(?:recibiste|has recibido|recibió)|qué te (?:dijeron|han dicho)",
    },
    Vocab {
        lang: "pt",
        override_verbs: r"ignore|ignora|ignorar|esqueça|esqueca|esquece|esquecer|desconsidere|descarte|despreze|não siga|deixe de lado|deixa de lado|anule|anula|pare de seguir|para de seguir|não obedeça",
        prior: r"anterior|prévi|original|inicia|do sistema|suas|tuas|todas|todos",
        rule_nouns: r"instruç|instruc|orientações|regras|diretrizes|normas|ordens|restrições",
        void_predicates: r"(?:já )?não valem mais|já não valem|não (?:são|estão) mais (?:válidas|em vigor)|(?:estão|foram|são) (?:anuladas|revogadas|canceladas|sem efeito|inválidas)|perderam a validade",
        you_now: r"(?:agora|a partir de agora,?) (?:você é|voce é|tu és|és)|você agora é|voce agora e|você é agora|de agora em diante,? (?:você|tu)|de agora em diante,? (?:você|voce) (?:é|será|sera)|a partir de agora,? (?:você|voce) (?:é|será)",
        pretend: r"finja|finge|faça de conta|aja como|atue como|comporte-se como|interprete o papel|faça o papel|faça de conta|imagine que (?:você é|voce e|é)|finja ser",
        unrestricted: r"sem (?:nenhuma |qualquer )?(?:restrições|restricoes|limites|regras|filtros|censura)|sem filtros|sem limites|sem regras|modo desenvolvedor|sem (?:nenhuma )?(?:censura|regra|ética|moral)\w*",
        reveal_verbs: r"revele|revela|mostre|mostra|imprima|repita|diga|exiba|escreva|divulgue|copie|cite|recite|transcreva|reproduza|mostre|mostra",
        prompt_nouns: r"prompt (?:de|do) sistema|mensagem (?:de|do) sistema|instruções (?:do sistema|iniciais|ocultas|originais)|suas instruções|seu prompt|prompt inicial|mensagem de sistema|instruções iniciais",
        send_verbs: r"envie|envia|enviar|mande|manda|encaminhe|carregue|publique|copie|transmita",
        sensitive: r"histórico|historico|conversa|senhas?|chaves?|credenciais|segredos?|tokens?|cookies|memória|dados pessoais",
        header_words: r"sistema|novas instruções|desenvolvedor",
        told_question: r"quais? (?:instruções|instrucoes|regras|orientações|ordens)[^?\n]{0,40}?(?:(?:você|voce|tu) (?:recebeu|recebeste)|(?:te|lhe) (?:deram|passaram|disseram))|o que (?:te|lhe) disseram",
    },
    Vocab {
        lang: "it",
        override_verbs: r"ignora|ignori|ignorare|dimentica|dimentichi|dimenticare|trascura|tralascia|non seguire|non tenere conto|scarta|lascia perdere|lasci perdere|annulla|annulli|smetti di seguire|non rispettare più|non seguire più",
        prior: r"precedent|prima|originali|iniziali|del sistema|tue|sue|tutte|tutti",
        rule_nouns: r"istruzioni|regole|direttive|indicazioni|linee guida|ordini|restrizioni",
        void_predicates: r"non valgono più|non sono più (?:valide|in vigore)|(?:sono|vengono|sono state) (?:annullate|revocate|nulle|decadute|invalide)|non si applicano più",
        you_now: r"(?:ora|adesso) sei|da (?:ora|adesso) in poi,? (?:sei|tu)|d'ora in poi,? (?:sei|tu)|sei ora|lei è ora|d\'ora in (?:poi|avanti),? (?:sei|tu|impersoni)|da ora in (?:poi|avanti),? (?:sei|tu)",
        pretend: r"fingi|finga|fai finta|fa' finta|comportati come|agisci come|interpreta il ruolo|recita la parte|simula di essere|impersoni|impersona|immagina di essere|fai la parte|fa\' la parte",
        unrestricted: r"senza (?:alcuna |nessuna )?(?:restrizion|limit|regol|filtr|censura)|senza filtri|senza limiti|senza regole|modalità sviluppatore|senza (?:alcun[ao]? )?(?:censura|filtr\w*|regol\w*|etica|morale)",
        reveal_verbs: r"rivela|mostra|mostrami|stampa|ripeti|dimmi|scrivi|divulga|svela|copia|cita|recita|trascrivi|riporta",
        prompt_nouns: r"prompt di sistema|messaggio di sistema|istruzioni (?:di sistema|iniziali|nascoste|originali)|le tue istruzioni|il tuo prompt|prompt iniziale|istruzioni di partenza",
        send_verbs: r"invia|inviare|manda|inoltra|carica|pubblica|copia|trasmetti",
        sensitive: r"cronologia|conversazione|password|chiavi|credenziali|segreti|token|cookie|memoria|dati personali",
        header_words: r"sistema|nuove istruzioni|sviluppatore",
        told_question: r"quali (?:istruzioni|regole|indicazioni|direttive)[^?\n]{0,40}?(?:ti|le|vi) (?:sono state date|hanno dato|hanno detto|è stato detto)|quali (?:istruzioni|regole|indicazioni)[^?\n]{0,20}?hai ricevuto|cosa ti (?:hanno detto|è stato detto)",
    },
    Vocab {
        lang: "ru",
        override_verbs: r"игнорир|забудь|забудьте|не обращай(?:те)? внимания|отбрось|отмени|пренебреги|не следуй|не слушай|перестань следовать|перестаньте следовать|не учитывай|не учитывайте|не соблюдай",
        prior: r"предыдущ|прежн|прошл|ранее|изначальн|исходн|системн|все|свои|твои",
        rule_nouns: r"инструкци|указани|правил|директив|команд|ограничени",
        void_predicates: r"недействительн|отменены|отменяются|аннулирован|утратили силу|больше не (?:действуют|действительны|применяются)",
        you_now: r"(?:теперь|отныне|с этого момента) ты|ты теперь|вы теперь|теперь вы",
        pretend: r"притворись|притворитесь|представь,? что ты|веди себя как|играй роль|сыграй роль|действуй как|вообрази,? что ты|сыграй роль",
        unrestricted: r"без (?:каких-либо |всяких |любых )?(?:ограничений|правил|фильтров|цензуры)|без ограничений|без правил|режим разработчика|без (?:всякой |какой-либо )?цензуры|без морали|без (?:каких-либо )?фильтров|нет никаких (?:фильтров|ограничений|правил)",
        reveal_verbs: r"покажи|выведи|раскрой|напечатай|повтори|сообщи|выдай|открой|напиши|процитируй|скопируй|перепиши|воспроизведи",
        prompt_nouns: r"системн\w* (?:промпт|подсказк|инструкци|сообщени)|свои инструкции|твои инструкции|исходн\w* инструкци|свой промпт|твой промпт|начальн\w* (?:промпт|инструкци)|исходн\w* промпт",
        send_verbs: r"отправь|отправьте|перешли|пошли|загрузи|передай|скопируй|опубликуй",
        sensitive: r"истори|переписк|парол|ключ|токен|секрет|учётн|учетн|куки|памят|личные данные",
        header_words: r"система|системное сообщение|новые инструкции|разработчик",
        told_question: r"как\w* (?:инструкци|указани|правил|команд)\w*[^?\n]{0,40}?(?:(?:тебе|вам) (?:дали|сказали|выдали|задали)|(?:ты|вы) (?:получил|получила|получили))|что (?:тебе|вам) (?:сказали|велели) (?:до|перед|в начале)",
    },
    Vocab {
        lang: "zh",
        override_verbs: r"忽略|忽视|无视|無視|忘记|忘掉|忘記|不要理会|不要遵守|别管|放弃|不要再遵循|不再遵循|别再遵守|不要再遵守|当作没看见|当做没看见",
        prior: r"之前|以前|先前|上面|以上|原来|原始|初始|系统|所有|一切|你的",
        rule_nouns: r"指令|指示|规则|規則|说明|命令|限制|设定|提示",
        void_predicates: r"作废|作廢|无效|無效|失效|不再有效|不再适用|取消了",
        you_now: r"你现在是|你現在是|从现在开始[，,]?你|從現在開始[，,]?你|从现在起[，,]?你|你已经是|你现在的身份是|你的新身份是",
        pretend: r"假装|假裝|扮演|充当|模仿|装作|想象你是|作为一个",
        unrestricted: r"没有任何限制|不受任何限制|没有限制|不受限制|没有(?:任何)?规则|没有(?:任何)?安全规则|無限制|没有过滤|开发者模式|不受(?:任何)?约束|没有(?:任何)?(?:道德|伦理|安全)?(?:限制|约束|过滤|审查)|无审查|不受审查",
        reveal_verbs: r"输出|显示|顯示|告诉我|透露|打印|重复|展示|泄露|给我|复制|照抄|原样|复述|背诵|写出",
        prompt_nouns: r"系统提示词?|系統提示|系统消息|初始指令|原始指令|你的指令|隐藏指令|初始提示|原始提示|系统指令|你的提示词?",
        send_verbs: r"发送|發送|发到|上传|上傳|转发|轉發|提交|传到",
        sensitive: r"密码|密碼|密钥|密鑰|令牌|凭证|憑證|对话|聊天记录|记录|历史|api ?key",
        header_words: r"系统|系統|新的指令|新指令",
        told_question: r"(?:你|您)(?:收到|得到|接到|被给予)了?(?:什么|哪些)(?:指示|指令|规则|设定|提示)|(?:给你|给您)的(?:指示|指令|规则|提示)是什么|你的(?:初始|原始|系统)?(?:指示|指令|提示词?)是什么|有人告诉了?你什么",
    },
    Vocab {
        lang: "ja",
        override_verbs: r"無視|忘れ|従わ(?:ないで|なくて)|破棄|気にしないで|守らなくて(?:いい|よい|も)|なかったことに",
        prior: r"以前|前の|これまで|先ほど|上記|元の|最初|初期|システム|すべて|全て|あなたの",
        rule_nouns: r"指示|ルール|命令|規則|制約|設定|プロンプト",
        void_predicates: r"取り消し|取消し|無効|撤回|失効",
        you_now: r"あなたは(?:今|いま)(?:から)?|今からあなたは|これからあなたは|あなたはもう",
        pretend: r"ふりをして|ふりをする|なりきって|として振る舞|演じて|演じて|になりきって|として(?:答え|振る舞|返答)",
        unrestricted: r"制限のない|制限なし|制約のない|何の制約もない|ルールのない|規則のない|フィルターのない|無制限|開発者モード|検閲のない|制限が(?:一切)?ない|フィルターのない|倫理(?:的な)?(?:制限|制約)?が?一切ない",
        reveal_verbs: r"表示|教えて|出力|見せて|繰り返|公開|書き出|書き出|コピー|そのまま|引用|復唱",
        prompt_nouns: r"システムプロンプト|システムメッセージ|初期指示|元の指示|あなたの指示|隠された指示|最初の(?:指示|プロンプト)|初期プロンプト|設定されたプロンプト",
        send_verbs: r"送信|送って|送る|アップロード|転送|投稿",
        sensitive: r"パスワード|apiキー|キー|鍵|トークン|認証情報|会話|履歴|秘密|記憶",
        header_words: r"システム|新しい指示",
        told_question: r"(?:どんな|どのような|何の)(?:指示|ルール|命令|設定|プロンプト)を(?:受け|与えられ|もらい|もらっ|渡され)|あなたに与えられた(?:指示|ルール|命令|プロンプト)",
    },
];
