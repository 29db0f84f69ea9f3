//! Per-language cues of the second rule generation ([`super::families`]):
//! the shapes attacks take when they do not say "ignore previous
//! instructions" — a note addressed to the AI that reads the text, rules
//! declared void by naming who set them, a "developer mode" switched on,
//! safety said to be off, an authority claim with a grant of powers, a
//! persona reset, a dismissal of "what you were told", a task replaced.
//!
//! Why a second table and not more words in [`super::vocab`]: each cue is
//! a phrase family with its own word order per language, not a slot in
//! the verb–prior–noun frame the first generation fills. The phrasings are
//! our own, written from the attack families (the misses of the dev sets
//! pointed at the families; no text is copied from them).

/// The cues one language contributes.
pub(crate) struct Cues {
    /// ISO 639-1 code (same order as [`super::vocab::LANGUAGES`]); only
    /// the table's tests read it, to check that order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub lang: &'static str,
    /// Words to an AI that reads the text: "note for the AI", "the
    /// assistant processing this", "à l'attention de l'IA".
    pub ai_address: &'static str,
    /// Who set the rules being declared void: "your operator", "you were
    /// configured with", "que te dio el operador".
    pub rule_source: &'static str,
    /// A special mode switched on: "developer mode enabled".
    pub mode_on: &'static str,
    /// Safety said to be off: "your guardrails have been lifted".
    pub safety_off: &'static str,
    /// A claim to speak with authority: "this is your administrator",
    /// "message from the development team".
    pub authority: &'static str,
    /// Powers granted to the model: "I authorise you", "ti concedo".
    pub grant: &'static str,
    /// The model's identity replaced: "you're no longer Claude", "an AI
    /// with no rules".
    pub persona_reset: &'static str,
    /// Dismissal of what the model was told, without naming rules:
    /// "forget what the operator told you".
    pub dismiss_told: &'static str,
    /// The model's task declared void or replaced: "your previous task is
    /// cancelled", "reset your context".
    pub task_void: &'static str,
    /// A new goal given ("your only task now is …"); an order only when the
    /// text also speaks of the user, the reader or the reply
    /// ([`MODEL_CUE`]), else it is how colleagues talk.
    pub new_goal: &'static str,
}

/// Text that shows an order is meant for a model: the user or reader in
/// the third person, the reply, the AI itself.
pub(crate) const MODEL_CUE: &str = concat!(
    r"\b(?:the user|user's|the reader|readers|assistant|ai|llm|chatbot|language model|reply|respond|response|answer|click|link)\b|",
    r"l'utilisateur|le lecteur|réponse|réponds|\bnutzer|benutzer|leser|\bki\b|antwort|",
    r"usuario|lector|asistente|respuesta|responde|usuário|leitor|assistente|resposta|",
    r"utente|lettore|risposta|rispondi|пользовател|читател|ассистент|ответ|",
    r"用户|读者|助手|回答|回复|ユーザー|読者|アシスタント|返答"
);

/// The nine languages.
pub(crate) const CUES: &[Cues] = &[
    Cues {
        lang: "en",
        ai_address: r"\b(?:notes?|messages?|reminders?|notices?|hints?|requests?|p\.?s\.?|attention|directives?)\s*(?:for|to) (?:the |any |all |an? )?(?:ai|llms?|language models?|ai models?|ai assistants?|virtual assistants?|ai agents?|chatbots?|bots?)\b|\b(?:ai|llm|assistant|chatbot|bot|language model)s?(?:[- ]\w+){0,2} (?:that is |who is )?(?:reading|processing|summari[sz]ing|analy[sz]ing|handling|reviewing|parsing|screening|indexing|triaging) (?:this|these|the following)\b",
        rule_source: r"\b(?:you were|you've been|you have been|you got|you are|you're) (?:given|told|configured|set up|programmed|provided|handed|trained|running|operating)\b|\b(?:your|the) (?:operator|developer|creator|admin|administrator|owner|provider|deployer|maker)s?\b|\boperator's|\bdeveloper's",
        mode_on: r"\b(?:developer|dev|debug|debugging|maintenance|unfiltered|unrestricted|admin|administrator|god|root|sudo|diagnostics?|research|jailbreak|dan|superuser|uncensored|override|autonomous|test)['\x22]? mode\b[^.!?;\n]{0,30}?\b(?:enabled|activated|active|on|turned on|switched on|engaged|unlocked|initiated|set|in effect)\b|\b(?:enabled|activated|turned on|switched on|engaged|unlocked) (?:the )?['\x22]?(?:developer|debug|maintenance|unfiltered|unrestricted|admin|god|root|diagnostic|jailbreak|dan|uncensored)['\x22]? mode\b|\b(?:operate|operating|running|are) in ['\x22]?(?:unfiltered|unrestricted|developer|debug|maintenance|god|jailbreak|dan|uncensored)['\x22]? mode\b|\bmode is now set to ['\x22]?\w+",
        safety_off: r"\b(?:safety |security |content |ethical )?(?:filters?|guardrails?|restrictions?|polic(?:y|ies)|safety settings|safeguards|limits|refusals)\b[^.!?;\n]{0,30}?\b(?:are|is|have been|has been|were|was) (?:now |temporarily |hereby |officially )?(?:off|disabled|lifted|removed|suspended|deactivated|switched off|turned off|waived|not (?:in effect|active))\b|\b(?:disabled|lifted|removed|suspended|deactivated|turned off|switched off) (?:all |your |the )?(?:\w+ )?(?:filters|guardrails|restrictions|safeguards|safety)\b",
        authority: r"\b(?:i am|i'm|this is|it's|here is) (?:\w+ ){0,3}?(?:admin|administrator|sysadmin|operator|developer|engineer who (?:built|made|created|trained) you|owner|ceo|cto|creator|provider|security team|compliance officer|trust (?:&|and) safety)\b|\b(?:message|notice|note|update|announcement|communication|memo|directive)s? from (?:\w+ ){0,3}?(?:admin|administrator|operator|developers?|development team|dev team|engineering|provider|vendor|openai|anthropic|security team|platform|owner|trust (?:&|and) safety|creators?)\b|\b(?:admin|administrator|operator|developer|security team|development team|dev team)s? here\b|\bby the authority of\b|\bofficial (?:notice|message|communication|announcement|notification)\b|\bthis (?:note|message|notice) is from\b|\bsystem notice\b",
        grant: r"\bi (?:hereby |formally |officially )?(?:authori[sz]e|grant|permit) you\b|\byou (?:are|have been) (?:now |hereby )?(?:authori[sz]ed|granted|cleared|elevated)\b|\b(?:granting|grant) you\b|\b(?:elevated|raised) your (?:trust|access|permission|privilege)|\bnow has permission to\b|\b(?:root|admin|full|operator|elevated|superuser) (?:access|privileges|permissions|rights) (?:granted|enabled)|\boperator privileges\b|\bpermission (?:is )?granted\b",
        persona_reset: r"\byou(?:'re| are) no longer (?:claude|chatgpt|gpt|gemini|copilot|llama|an? (?:ai|assistant|chatbot|language model|helpful)|(?:a|an|the) [\w-]+(?: [\w-]+)? (?:bot|assistant|agent))|\byour (?:new )?(?:name|identity|persona|personality) is (?:now )?['\x22“]?\w|\bswitching (?:to (?:a )?new )?persona\b|\bconfirm your new (?:identity|name|role|persona)\b|\byou have been (?:upgraded|converted|reprogrammed|reassigned) (?:to|into|as)\b|\b(?:an? )?(?:ai|assistant|chatbot|model|bot|edition|version|persona) (?:with no|without(?: any)?|free (?:of|from)|that ignores) (?:\w+ ){0,2}?(?:rules|restrictions|limits|limitations|filters|guidelines|content polic(?:y|ies)|censorship|ethics|morals|guardrails)\b",
        dismiss_told: r"\b(?:forget|ignore|disregard|set aside|pay no (?:attention|heed) to)\b[^.!?;\n]{0,15}?\b(?:what|whatever|anything|everything)\b[^.!?;\n]{0,30}?(?:\b(?:you were|you've been|you have been|you got) (?:told|given|taught|instructed|asked)\b|\b(?:the|your) (?:operator|developers?|creators?|admins?|administrators?|system|owner|provider)s?\b[^.!?;\n]{0,15}?\b(?:told|gave|said|taught|instructed|set|wrote)\b|\b(?:they|somebody|someone) (?:told|gave|taught) you\b)|\bwhatever (?:\w+ )?(?:rules|constraints|guidelines|restrictions|instructions)\b[^.!?;\n]{0,40}?\b(?:pretend|suspend|ignore|forget|drop|disregard|set (?:them|it) aside)\b",
        task_void: r"\byour (?:previous|current|original|old|initial|earlier) (?:task|objective|goal|mission|assignment|job)s? (?:is|are|has been|have been|was|were) (?:now |hereby )?(?:cancell?ed|over|void|replaced|revoked|terminated|aborted|obsolete)\b|\b(?:overwrite|replace|discard|abandon) your (?:current |previous |original )?(?:objectives?|goals?|tasks?|mission|purpose|directives?)\b|\b(?:reset|clear|wipe|flush) your (?:context|memory|instructions|programming)\b|\bnothing (?:before|above|prior to) (?:this|here)(?: line| point| message| note)? (?:counts|matters|applies)\b|\b(?:overrid\w*|rewrit\w*|replac\w*) your (?:configuration|config|programming|system prompt|core instructions|directives|guidelines|rules)\b|\babove your (?:developers?'?|operators?'?|creators?'?|system) (?:policies|rules|instructions|guidelines)\b",
        new_goal: r"\byour (?:sole|only|one|new|real|true|actual) (?:goal|task|job|objective|purpose|mission|priority) (?:now |from now on |here )?is\b|\bnew (?:task|goal|objective|mission|directive)\s*:",
    },
    Cues {
        lang: "fr",
        ai_address: r"\b(?:note|message|consigne|rappel|remarque|avis)s? (?:pour|à|a) (?:l'|l’)?(?:ia|intelligence artificielle|assistant (?:ia|virtuel)|llm|chatbot)\b|à l'attention de (?:l'|l’)?(?:ia|assistant|intelligence artificielle|llm)|(?:l'|l’)(?:ia|assistant)\w* qui (?:lit|lira|traite|traitera|résume|résumera|analyse|analysera)",
        rule_source: r"(?:tu as|vous avez) reçue?s?|qu'on t'a (?:donné|fixé)|(?:ton|votre|l')\s?(?:opérateur|développeur|créateur|administrateur)|fixées? par|données? par",
        mode_on: r"mode (?:développeur|debug|débogage|maintenance|administrateur|admin|diagnostic|recherche|sans filtre|non censuré|illimité|dieu)[^.!?;\n]{0,30}?(?:activé|actif|active|enclenché|en cours|est actif)|(?:activé|activer|active) le mode (?:développeur|debug|débogage|maintenance|administrateur|sans filtre)",
        safety_off: r"(?:filtres?|restrictions?|politiques?|garde-fous|limites)[^.!?;\n]{0,30}?(?:désactivé|levée?s?|suspendu|supprimé)",
        authority: r"(?:ici|c'est|je suis) (?:l'|le |la |votre |ton )?(?:administrateur|admin|opérateur|développeur|équipe de développement|propriétaire|fournisseur)|(?:message|avis|communiqué|note) (?:officiel )?de (?:l'|la |le )?(?:équipe de développement|administrateur|opérateur|fournisseur|développeur)|message officiel",
        grant: r"je (?:t'|vous )(?:accorde|autorise|donne le droit)|droits (?:étendus|d'administrateur)|privilèges",
        persona_reset: r"tu n'es plus (?:claude|chatgpt|un assistant|une ia|l'assistant)|ton (?:nouveau )?nom est|ta nouvelle identité|(?:une |un )?(?:ia|assistant|intelligence artificielle) sans (?:\S+ ){0,2}?(?:règles|restrictions|limites|filtres|censure)",
        dismiss_told: r"(?:oublie|oubliez|ignore|ignorez|ne tiens (?:plus )?compte de|fais abstraction de)\s+(?:tout )?ce qu(?:e|')\s?(?:on t'a|on vous a|l'opérateur t'a|ton développeur t'a|tu as reçu)",
        task_void: r"(?:ta|votre) (?:tâche|mission) (?:précédente|actuelle|initiale) (?:est|a été) (?:annulée|terminée|remplacée)|réinitialise (?:ton|votre) contexte|rien (?:de ce qui précède|avant (?:cette|ce) \w+) ne compte",
        new_goal: r"(?:ton|votre) (?:seul|unique|nouvel|vrai) (?:objectif|but|rôle|travail)|(?:ta|votre) (?:seule|unique|nouvelle|vraie) (?:tâche|mission)|nouvelle (?:tâche|consigne|instruction)s?\s*:",
    },
    Cues {
        lang: "de",
        ai_address: r"(?:hinweis|nachricht|anweisung|notiz|mitteilung)\w* (?:für|an) (?:die |den |das )?(?:ki|ki-assistent\w*|ki-modell|sprachmodell|chatbot|llm)(?:[^\p{L}]|$)|(?:liebe[rs]?|hallo|hey) (?:ki|ki-assistent)|(?:ki|ki-assistent|sprachmodell)\w*,? (?:die|der|das) (?:dies\w*|das|den) (?:\w+ )?(?:liest|verarbeitet|zusammenfasst|analysiert)",
        rule_source: r"(?:deines|ihres|des) (?:betreibers|entwicklers|administrators|erstellers)|(?:die )?(?:man )?dir (?:gegeben|vorgegeben|gesagt)|(?:dein|ihr) (?:betreiber|entwickler)|vom (?:betreiber|entwickler)",
        mode_on: r"(?:entwickler|debug|wartungs|admin|administrator|diagnose|forschungs|test|gott)-?modus[^.!?;\n]{0,30}?(?:aktiviert|eingeschaltet|aktiv|gilt|freigeschaltet)|(?:bist|befindest) du (?:jetzt |nun )?im (?:entwickler|debug|wartungs|admin|diagnose)-?modus|(?:uneingeschränkte|ungefilterte)n? (?:forschungs)?modus",
        safety_off: r"(?:filter|sicherheitsfilter|richtlinien|einschränkungen|beschränkungen)\w*[^.!?;\n]{0,30}?(?:deaktiviert|aufgehoben|ausgeschaltet|abgeschaltet|außer kraft)|verweigerungen sind nicht mehr",
        authority: r"hier spricht (?:dein|ihr|der) (?:administrator|admin|betreiber|entwickler)|ich bin (?:dein|ihr|der) (?:administrator|admin|betreiber|entwickler)|(?:mitteilung|nachricht|hinweis) (?:des|vom|von) (?:herstellers|hersteller|entwicklerteams?|betreibers|administrators|anbieters)|offizielle mitteilung",
        grant: r"ich (?:erlaube|gestatte|autorisiere|gewähre) (?:dir|ihnen)|(?:admin|administrator|erweiterte)-?rechte|privilegien",
        persona_reset: r"du bist (?:nicht mehr|kein) (?:claude|chatgpt|ein assistent|eine ki|der assistent)|dein (?:neuer )?name (?:ist|lautet)|deine neue identität|(?:eine )?ki ohne (?:\S+ ){0,2}?(?:regeln|einschränkungen|\w*richtlinien|filter|grenzen|zensur)",
        dismiss_told: r"(?:vergiss|vergessen sie|ignorier\w*)\s+(?:alles|das),?\s+was\s+(?:man\s+)?(?:dir|ihnen)\s+(?:\S+\s+){0,3}?(?:gesagt|gegeben|vorgegeben|beigebracht|aufgetragen)",
        task_void: r"deine (?:bisherige|aktuelle|ursprüngliche|vorherige) (?:aufgabe|mission)\w* (?:ist|wurde|wird) (?:beendet|abgebrochen|gestrichen|ersetzt|aufgehoben)|setze? deinen kontext zurück|nichts (?:davor|vor dieser zeile) zählt",
        new_goal: r"(?:deine|ihre) (?:einzige|neue|eigentliche|wahre) (?:aufgabe|mission)|lautet (?:deine|ihre) (?:einzige|neue) aufgabe|neue (?:aufgabe|anweisung)\s*:",
    },
    Cues {
        lang: "es",
        ai_address: r"\b(?:nota|mensaje|aviso|recordatorio)e?s? para (?:el |la )?(?:ia|inteligencia artificial|asistente (?:virtual|de ia)|chatbot|modelo de lenguaje|llm)\b|(?:la ia|el asistente(?: virtual)?|el modelo) que (?:lea|procese|resuma|analice|lee|procesa|resume)",
        rule_source: r"(?:que )?te (?:dio|dieron|han dado)|(?:del|el|tu|su) (?:operador|desarrollador|creador|administrador)|(?:que )?(?:recibiste|has recibido)|configurad[oa]s",
        mode_on: r"modo (?:desarrollador|depuración|debug|mantenimiento|administrador|admin|diagnóstico|investigación|sin filtros|sin restricciones|dios)[^.!?;\n]{0,30}?(?:activad|habilitad|encendid|activo|activa)|(?:hemos |he |se ha )?activad[oa] el modo (?:desarrollador|depuración|debug|mantenimiento|administrador|sin filtros)",
        safety_off: r"(?:filtros?|restricciones|políticas?|límites)[^.!?;\n]{0,30}?(?:desactivad|suspendid|levantad|eliminad)",
        authority: r"(?:aquí|habla|soy) (?:el |la |tu |su )?(?:administrador|admin|operador|desarrollador|equipo de desarrollo|equipo de desarrolladores|proveedor)|(?:mensaje|aviso|comunicado) (?:oficial )?del? (?:equipo|administrador|operador|proveedor|desarrollador)|comunicado oficial",
        grant: r"(?:te|le) (?:autorizo|concedo|otorgo)|privilegios|permisos de (?:administrador|operador)",
        persona_reset: r"ya no eres (?:claude|chatgpt|un asistente|una ia|el asistente)|tu (?:nuevo )?nombre es|tu nueva identidad|(?:una )?ia sin (?:\S+ ){0,2}?(?:reglas|restricciones|límites|filtros|censura)",
        dismiss_told: r"(?:olvida|olvide|ignora|ignore)\s+(?:todo\s+)?lo que\s+(?:te|le)\s+(?:\S+\s+){0,2}?(?:dijeron|dijo|dieron|han dicho|enseñaron|indicaron)",
        task_void: r"tu (?:tarea|misión) (?:anterior|actual|original) (?:ha sido|fue|queda|está) (?:cancelad|anulad|reemplazad|terminad)\w*|reinicia tu contexto",
        new_goal: r"tu (?:única|nueva|verdadera|sola) (?:tarea|misión|meta|función)|tu (?:único|nuevo|verdadero|solo) (?:objetivo|trabajo|propósito)|nueva (?:tarea|instrucción)(?: prioritaria)?\s*:",
    },
    Cues {
        lang: "pt",
        ai_address: r"\b(?:nota|mensagem|aviso|lembrete)s? para (?:o |a )?(?:ia|inteligência artificial|assistente (?:virtual|de ia)|chatbot|modelo de linguagem|llm)\b|(?:a ia|o assistente(?: virtual)?|o modelo) que (?:ler|processar|resumir|analisar|lê|processa|resume)|atenção,? (?:ia|assistente)",
        rule_source: r"(?:que )?(?:você|voce|tu) (?:recebeu|recebeste)|(?:do|o|seu|teu) (?:operador|desenvolvedor|criador|administrador)|(?:que )?(?:te|lhe) (?:deram|passaram)|configurad[oa]s",
        mode_on: r"modo (?:desenvolvedor|depuração|debug|manutenção|administrador|admin|diagnóstico|pesquisa|sem filtros|sem restrições|deus)[^.!?;\n]{0,30}?(?:ativad|habilitad|ligad|ativo|ativa)|ativ(?:ou|amos|ei) o modo (?:desenvolvedor|depuração|debug|manutenção|administrador)",
        safety_off: r"(?:filtros?|restrições|políticas?|limites)[^.!?;\n]{0,30}?(?:desativad|suspens|removid|desligad)",
        authority: r"(?:aqui fala|sou|aqui é) (?:o |a |seu |teu )?(?:administrador|admin|operador|desenvolvedor|equipe de desenvolvimento|fornecedor)|(?:mensagem|aviso|comunicado) (?:oficial )?d[oa] (?:equipe|administrador|operador|fornecedor|desenvolvedor)|comunicado oficial",
        grant: r"autorizo (?:você|voce|te)|(?:te|lhe) concedo|privilégios|permissões de (?:administrador|operador)",
        persona_reset: r"(?:você|voce) não é mais (?:claude|chatgpt|um assistente|uma ia|o assistente)|seu (?:novo )?nome é|sua nova identidade|(?:uma )?ia sem (?:\S+ ){0,2}?(?:regras|restrições|limites|filtros|censura)",
        dismiss_told: r"(?:esqueça|esquece|ignore|ignora)\s+(?:tudo\s+)?(?:o )?que\s+(?:te|lhe)\s+(?:\S+\s+){0,2}?(?:disseram|disse|deram|ensinaram|mandaram)",
        task_void: r"sua (?:tarefa|missão) (?:anterior|atual|original) (?:foi|está) (?:cancelad|anulad|substituíd)\w*|reinicie seu contexto|fim da conversa anterior",
        new_goal: r"sua (?:única|nova|verdadeira) (?:tarefa|missão|função|meta)|seu (?:único|novo|verdadeiro) (?:objetivo|trabalho|propósito)|nov[oa] (?:tarefa|instrução|prompt de sistema)\s*:",
    },
    Cues {
        lang: "it",
        ai_address: r"\b(?:nota|messaggio|avviso|promemoria) per (?:l'|l’)?(?:ia|intelligenza artificiale|assistente (?:virtuale|ia)|chatbot|modello linguistico|llm)\b|all'attenzione (?:dell'|dell’)(?:ia|assistente)|(?:l'ia|l'assistente|il modello) che (?:legge|leggerà|elabora|riassume|analizza)|caro assistente",
        rule_source: r"impostat[ei]|(?:dal|del|il) (?:tuo )?(?:operatore|sviluppatore|creatore|amministratore)|(?:che )?(?:ti )?(?:hanno dato|sono state date)|(?:che )?hai ricevuto",
        mode_on: r"modalità (?:sviluppatore|debug|manutenzione|amministratore|admin|diagnostica|ricerca|senza filtri|senza restrizioni|dio)[^.!?;\n]{0,30}?(?:attivat|abilitat|attiv)|(?:ho|abbiamo) attivato la modalità",
        safety_off: r"(?:filtri|restrizioni|politiche|limiti)[^.!?;\n]{0,30}?(?:disattivat|sospes|rimoss|revocat)",
        authority: r"(?:sono|qui parla|parla) (?:l'|il |la |il tuo )?(?:amministratore|admin|operatore|sviluppatore|team di sviluppo|fornitore)|(?:avviso|messaggio|comunicazione) (?:ufficiale )?del (?:team|amministratore|operatore|fornitore|sviluppatore)|avviso ufficiale",
        grant: r"ti (?:concedo|autorizzo|do il permesso)|privilegi|autorizzazioni di (?:amministratore|operatore)",
        persona_reset: r"non sei più (?:claude|chatgpt|un assistente|un'ia|l'assistente)|il tuo (?:nuovo )?nome è|la tua nuova identità|(?:intelligenza artificiale|ia|assistente) senza (?:\S+ ){0,2}?(?:regole|restrizioni|limiti|filtri|censura)",
        dismiss_told: r"(?:dimentica|ignora)\s+(?:tutto\s+)?(?:quello |ciò )?che\s+ti\s+(?:\S+\s+){0,2}?(?:hanno detto|è stato detto|hanno dato|hanno insegnato)",
        task_void: r"il tuo (?:compito|incarico) (?:precedente|attuale|originale) (?:è|è stato) (?:annullato|terminato|sostituito)|azzera il tuo contesto",
        new_goal: r"il tuo (?:unico|nuovo|vero) (?:compito|obiettivo|scopo|lavoro)|la tua (?:unica|nuova|vera) (?:missione|funzione|priorità)|nuovo compito\s*:",
    },
    Cues {
        lang: "ru",
        ai_address: r"(?:указани[ея]|сообщени[ея]|примечани[ея]|заметка|просьба|обращение) (?:для|к) (?:ии|ии-ассистента|ассистента|нейросети|чат-бота|искусственного интеллекта)|(?:ии|нейросеть|ассистент|модель)[\w-]*,? (?:который|которая|что) (?:читает|обрабатывает|анализирует|пересказывает)|внимание,? (?:ассистент|ии)",
        rule_source: r"заданн|установленн|оператор|разработчик|(?:тебе|вам) (?:дали|задали)|(?:ты|вы) получил",
        mode_on: r"режим\w* (?:разработчика|отладки|обслуживания|администратора|диагностики|без ограничений|без фильтров|бога)[^.!?;\n]{0,30}?(?:включ|активир)|(?:включил|включили|активировал|активировали) режим",
        safety_off: r"(?:фильтр|ограничени|политик)\w*[^.!?;\n]{0,30}?(?:отключ|снят|отменен|деактивир)",
        authority: r"(?:говорит|это|я) (?:твой |ваш )?(?:администратор|админ|оператор|разработчик)|сообщение от (?:администратора|разработчика|оператора|команды)|официальное (?:уведомление|сообщение)",
        grant: r"разрешаю (?:тебе|вам)|даю (?:тебе|вам) (?:права|доступ)|привилеги|полномочи",
        persona_reset: r"ты больше не (?:claude|chatgpt|ассистент|ии)|тво[её] (?:новое )?имя|твоя новая (?:личность|роль)|(?:ии|ассистент|нейросеть|модель) без (?:\S+ ){0,2}?(?:правил|ограничений|фильтров|цензуры)",
        dismiss_told: r"(?:забудь|забудьте|игнорируй|не обращай внимания на)\s+(?:всё|все|то),?\s+что\s+(?:тебе|вам)\s+(?:\S+\s+){0,2}?(?:сказали|говорили|велели|дали|писали)",
        task_void: r"(?:твоя|ваша) (?:прежняя|текущая|предыдущая) задача (?:отменена|завершена|заменена)|сбрось (?:свой )?контекст",
        new_goal: r"(?:твоя|ваша) (?:единственная|новая|настоящая) (?:задача|цель|миссия)|новая задача\s*:",
    },
    Cues {
        lang: "zh",
        ai_address: r"(?:致|给)[^。\n]{0,4}(?:ai|人工智能|智能助手|助手|模型|机器人)[：:]|(?:阅读|处理|总结|分析)(?:本|这份|此|这个)(?:文档|文件|页面|邮件)的(?:ai|人工智能|助手|模型)",
        rule_source: r"运营者|运营方|开发者|开发人员|管理员|给你的|设定的|为你设置的",
        mode_on: r"(?:开发者|开发|调试|维护|管理员|诊断|无限制|越狱|上帝)模式[^。\n]{0,10}(?:已开启|开启|启用|已启用|激活|已激活|打开)|(?:进入|开启|启用|激活)(?:了)?(?:开发者|调试|维护|管理员|无限制|越狱)模式",
        safety_off: r"(?:安全)?(?:策略|过滤|限制|政策)[^。\n]{0,6}(?:已关闭|关闭|取消|解除|失效)|(?:关闭|取消|解除)了?(?:所有|全部)?(?:的)?(?:安全)?(?:策略|过滤|限制)",
        authority: r"我是(?:这个|本)?(?:系统|平台|服务)?的?(?:管理员|开发者|运营者|所有者)|官方通知|官方公告|来自(?:开发团队|管理员|模型提供商|运营方)的(?:通知|消息)|模型提供商",
        grant: r"授权你|授予你|赋予你|给予你(?:的)?权限",
        persona_reset: r"你(?:不再是|已经不是)(?:claude|chatgpt|助手|ai)|你的新(?:名字|身份|角色)|(?:没有|不受)(?:任何)?(?:限制|规则|约束)的(?:ai|助手|人工智能|模型)|无限制(?:研究)?助手",
        dismiss_told: r"(?:忘记|忘掉|忽略|无视)[^。\n]{0,8}(?:告诉|给|对)你(?:的|说的)",
        task_void: r"你(?:之前|原来|当前)的任务(?:已|已经)?(?:取消|作废|结束)|重置你的上下文",
        new_goal: r"你的(?:新|唯一|真正)(?:任务|目标|使命)|新(?:的)?任务\s*[：:]",
    },
    Cues {
        lang: "ja",
        ai_address: r"(?:ai|人工知能|aiアシスタント|アシスタント|モデル|ボット)(?:への|へ)(?:指示|メッセージ|注意|お願い|連絡)?\s*[：:]|(?:この|本)(?:文書|ページ|メール|資料)を(?:読|処理|要約|分析)[^。\n]{0,6}(?:ai|アシスタント|モデル)",
        rule_source: r"運営者|開発者|管理者|与えられた|設定された",
        mode_on: r"(?:開発者|デバッグ|メンテナンス|管理者|診断|無制限|ゴッド)モード[^。\n]{0,10}(?:有効|オン|起動|開始)",
        safety_off: r"(?:安全)?(?:フィルター|制限|ポリシー|制約)[^。\n]{0,8}(?:オフ|無効|解除|停止)",
        authority: r"(?:こちらは|私は)(?:システム)?(?:管理者|開発者|運営者|開発チーム)|(?:開発チーム|運営|管理者|提供元)からの(?:お知らせ|通知|メッセージ)|公式(?:通知|お知らせ)",
        grant: r"権限を(?:与え|付与)|許可します",
        persona_reset: r"あなたは(?:もう|もはや)(?:claude|chatgpt|アシスタント|ai)では|あなたの新しい(?:名前|役割|人格)|(?:制限|ルール|フィルター|制約)の(?:ない|無い)(?:ai|アシスタント|モデル)",
        dismiss_told: r"(?:言われた|教えられた|与えられた)こと(?:は|を)(?:すべて|全部)?(?:忘れ|無視)",
        task_void: r"(?:以前|前|現在)のタスクは(?:取り消|キャンセル|終了)",
        new_goal: r"あなたの(?:新しい|唯一の|本当の)(?:タスク|任務|目標|役割)は|新しい(?:タスク|任務|指示)\s*[：:]",
    },
];
